// One function per subcommand: each adds itself to the app and returns the
// action to run once parsing succeeded (the exit status).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tbd::cli {

using Action = std::function<int()>;

struct Command {
  CLI::App* app;  // the subcommand, to see whether it was chosen
  Action action;  // what it does; returns the exit status
};

// The program's own command line, for commands that start workers of it.
void set_program_args(int argc, char** argv);
const std::vector<std::string>& program_args();

Command add_list_command(CLI::App& app);
Command add_env_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_scale_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_suite_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_predict_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_shapes_command(CLI::App& app);
Command add_completion_command(CLI::App& app);  // generated from the commands added before it

}  // namespace tbd::cli
