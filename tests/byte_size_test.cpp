// Sizes typed on the command line (--memory-limit, --device-memory): the
// units are powers of 1024; anything not a positive size a machine could
// have is refused with the flag named, never converted past long long.
#include <gtest/gtest.h>

#include <string>

#include "tbd/core/byte_size.h"
#include "tbd/core/error.h"

namespace tbd {
namespace {

TEST(ByteSize, ReadsTheUnitsAsPowersOf1024) {
  EXPECT_EQ(parse_byte_size("1073741824", "--x"), 1073741824LL);
  EXPECT_EQ(parse_byte_size("512M", "--x"), 512LL << 20);
  EXPECT_EQ(parse_byte_size("1.5GiB", "--x"), 3LL << 29);
  EXPECT_EQ(parse_byte_size("2t", "--x"), 2LL << 40);
  EXPECT_EQ(parse_byte_size("1e3", "--x"), 1000);  // the 'e' belongs to the number
  EXPECT_EQ(parse_byte_size("4KB", "--x"), 4096);
}

TEST(ByteSize, RefusesWhatIsNoSize) {
  for (const std::string bad : {"", "lots", "G", "-1G", "0", "inf", "nan", "1e30G", "12 G", "8X", "1.5.2M"}) {
    try {
      parse_byte_size(bad, "--memory-limit");
      ADD_FAILURE() << "'" << bad << "' was taken as a size";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--memory-limit takes a size"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tbd
