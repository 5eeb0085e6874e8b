// tbd: training benchmarks for deep neural networks.
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/measure/machine/environment.h"

namespace tbd::cli {
namespace {
std::vector<std::string> g_args;
}
void set_program_args(int argc, char** argv) { g_args.assign(argv, argv + argc); }
const std::vector<std::string>& program_args() { return g_args; }
}  // namespace tbd::cli

namespace {

// A SIGINT or SIGTERM that comes while a command starts up is recorded and
// honoured at the first iteration boundary, or passed to a study's first
// run. Installed in main, the handler came about a second after the start
// (LibTorch's static initializers run first), and a signal in that time was
// lost: a script's background job starts with SIGINT ignored. So it is
// installed from the executable's preinit array, which the dynamic loader
// runs before any shared library's initializer, a few milliseconds in.
// Commands that do not stop early (list, report, ...) keep the default.
void install_interrupt_handler_first(int argc, char** argv, char** /*envp*/) {
  for (const char* honours : {"run", "sweep", "suite", "scale", "predict", "shapes"})
    if (argc > 1 && std::strcmp(argv[1], honours) == 0) tbd::install_interrupt_handler();
}

__attribute__((section(".preinit_array"),
               used)) void (*const preinit_interrupt_handler)(int, char**, char**) = install_interrupt_handler_first;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tbd — benchmarks and analysis of deep-neural-network training on LibTorch.\n"
      "Run `tbd COMMAND --help` for the options of one command."};
  app.require_subcommand(1);
  app.set_version_flag("--version", tbd::version_text(), "Print tbd's and LibTorch's versions and exit");
  app.footer(
      "Examples:\n"
      "  tbd list                                   the workloads\n"
      "  tbd run resnet50 --scale small --iters 10  a short benchmark on synthetic data\n"
      "  tbd run resnet50 --data ~/imagenet/train   the same on an image folder\n"
      "  tbd env                                    this machine and build\n"
      "  tbd run resnet50 --nproc 2                 data-parallel on 2 local processes\n"
      "  tbd scale resnet50 --nproc 1,2             scaling efficiency\n"
      "  tbd sweep resnet50 --batch-sizes auto --scale small   throughput against batch size\n"
      "  tbd suite --preset quick --out results     every workload, small scale\n"
      "  tbd report results --format html --out r.html   charts, opens offline\n"
      "  tbd compare old-results new-results        exit 1 on a significant slow-down\n"
      "  tbd predict base.json --nproc 2 --check    what 2 ranks would do, and the error\n"
      "  tbd plan llama --set size=8b --device-memory 80G   a step's memory before any run: does it fit?\n"
      "Exit status: 0 success, 1 the run failed, 2 bad usage, 130/143 stopped by SIGINT/SIGTERM.");
  const std::vector<tbd::cli::Command> commands = {
      tbd::cli::add_list_command(app),   tbd::cli::add_env_command(app),     tbd::cli::add_run_command(app),
      tbd::cli::add_scale_command(app),  tbd::cli::add_sweep_command(app),   tbd::cli::add_suite_command(app),
      tbd::cli::add_report_command(app), tbd::cli::add_compare_command(app), tbd::cli::add_predict_command(app),
      tbd::cli::add_plan_command(app),   tbd::cli::add_shapes_command(app),  tbd::cli::add_completion_command(app)};
  tbd::cli::set_program_args(argc, argv);
  // c10d logs each failed rendezvous attempt (as a warning, the last as an
  // error) with a hundred-line C++ backtrace, before tbd's own `tbd: error:`
  // line says the same in one. TORCH_CPP_LOG_LEVEL=WARNING brings them back.
  if (!std::getenv("TORCH_CPP_LOG_LEVEL")) FLAGS_caffe2_log_level = 3;  // FATAL only
  // Kineto prints "USDT: profiler_start/stop" and "STAGE:" lines to stderr
  // around every --trace; tbd reports a failed trace itself. Level 6 is above
  // all of Kineto's levels; KINETO_LOG_LEVEL set by the user wins.
  setenv("KINETO_LOG_LEVEL", "6", /*overwrite=*/0);
  const auto is_command = [&](const std::string& word) {
    for (const auto& c : commands)
      if (c.app->get_name() == word) return true;
    return false;
  };
  // CLI11 would answer "A subcommand is required" to `tbd --bogus`, hiding the typo.
  if (argc > 1 && argv[1][0] == '-') {
    const std::string first = argv[1];
    if (first != "--help" && first != "-h" && first != "--version") {
      std::cerr << fmt::format("tbd: error: unknown option '{}': tbd takes a command first (see tbd --help)\n", first);
      return 2;
    }
  }
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::vector<std::string> known;
    for (const auto& c : commands) known.push_back(c.app->get_name());
    std::cerr << fmt::format("tbd: error: unknown command '{}'; commands: {} (see tbd --help)\n", argv[1],
                             fmt::join(known, ", "));
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with status 0, as CLI11 prints them.
    if (e.get_exit_code() == 0) return app.exit(e);
    // Usage errors in tbd's own form: one `tbd: error:` line, status 2.
    const std::string command = argc > 1 && is_command(argv[1]) ? std::string(argv[1]) + " " : "";
    std::cerr << "tbd: error: " << e.what() << "; see tbd " << command << "--help\n";
    return 2;
  }
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.action();
    return 2;
  } catch (const tbd::UsageError& e) {
    std::cerr << "tbd: error: " << e.what() << "\n";
    return 2;
  } catch (const tbd::Error& e) {
    std::cerr << "tbd: error: " << e.what() << "\n";
    // A command that fails because a SIGINT/SIGTERM stopped its runs (tbd predict's
    // measurements) was stopped, as run, sweep and suite report it: 130 or 143.
    if (const int stopped = tbd::interrupted_exit_status(); stopped != 0) return stopped;
    return 1;
  } catch (const c10::Error& e) {
    // Its what() carries a C++ backtrace of a hundred lines; the message is what helps.
    std::cerr << "tbd: error: LibTorch: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tbd: internal error: " << e.what() << "\n";
    return 1;
  }
}
