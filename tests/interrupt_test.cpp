// SIGINT and SIGTERM: the first asks for a partial result, the second is
// absorbed, the third abandons the run, but never in the middle of writing a
// result file.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "tbd/core/interrupt.h"
#include "tbd/output/result_file.h"

namespace tbd {
namespace {

TEST(Interrupt, SigtermIsAnInterruptWithItsOwnExitStatus) {
  clear_interrupt();
  install_interrupt_handler();
  std::raise(SIGTERM);
  EXPECT_TRUE(interrupt_requested());
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  EXPECT_EQ(interrupted_exit_status(), 143);
  std::raise(SIGINT);  // the second signal is absorbed; the first one's status stays
  EXPECT_EQ(interrupt_count(), 2);
  EXPECT_EQ(interrupted_exit_status(), 143);
  clear_interrupt();
  EXPECT_FALSE(interrupt_requested());
  EXPECT_EQ(interrupted_exit_status(), 0);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

TEST(InterruptDeathTest, TheThirdSignalEndsTheProcessBySignal) {
  EXPECT_EXIT(
      {
        clear_interrupt();
        install_interrupt_handler();
        std::raise(SIGINT);
        std::raise(SIGINT);
        std::raise(SIGINT);
        std::exit(0);  // not reached
      },
      testing::KilledBySignal(SIGINT), "");
}

TEST(InterruptDeathTest, AbandoningWaitsForTheResultFileToBeComplete) {
  GTEST_FLAG_SET(death_test_style, "fast");  // the child is a fork: it shares `file` with this test
  const auto file = std::filesystem::temp_directory_path() / ("tbd-abandon-" + std::to_string(::getpid()) + ".json");
  EXPECT_EXIT(
      {
        clear_interrupt();
        install_interrupt_handler();
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        {
          const AbandonDeferred writing;  // what write_file_atomically holds
          std::raise(SIGTERM);            // the third: held until the file is complete
          write_file_atomically(file.string(), "{\"complete\": true}\n");
        }
        std::exit(0);  // not reached: the held signal ends the process here
      },
      testing::KilledBySignal(SIGTERM), "");
  ASSERT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(std::filesystem::file_size(file), 19u);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tbd
