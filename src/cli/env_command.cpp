// `tbd env`: the machine and build tbd runs on.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "tbd/measure/environment.h"

namespace tbd::cli {

Command add_env_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("env", "Show the hardware and software a result would record");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return {cmd, [json]() {
    const nlohmann::json env = capture_environment();
    if (*json) {
      std::cout << env.dump(2) << "\n";
      return 0;
    }
    const auto& cpu = env["cpu"];
    const auto& acc = env["accelerator"];
    std::cout << fmt::format("cpu          {} ({} logical cores, {} available to this process)\n",
                             cpu["model"].get<std::string>(), cpu["logical_cores"].get<int>(),
                             cpu["cores_available_to_process"].get<int>());
    if (env["memory"]["total_bytes"].is_number())
      std::cout << fmt::format("memory       {:.1f} GiB\n",
                               env["memory"]["total_bytes"].get<double>() / (1024.0 * 1024 * 1024));
    std::cout << fmt::format("os           {} ({} {})\n", env["os"]["distribution"].get<std::string>(),
                             env["os"]["system"].get<std::string>(), env["os"]["release"].get<std::string>());
    std::cout << fmt::format("compiler     {}\n", env["compiler"].get<std::string>());
    std::cout << fmt::format("libtorch     {} (intra-op threads {}, inter-op {})\n",
                             env["libtorch"]["version"].get<std::string>(),
                             env["threads"]["intra_op"].get<int>(), env["threads"]["inter_op"].get<int>());
    std::cout << fmt::format("cuda         {}\n",
                             acc["cuda_available"].get<bool>()
                                 ? fmt::format("{} device(s)", acc["cuda_devices"].get<int>())
                                 : std::string(acc["cuda_build"].get<bool>() ? "no device visible"
                                                                             : "not in this LibTorch build"));
    std::cout << fmt::format("tbd          {} ({})\n", env["tbd"]["version"].get<std::string>(),
                             env["tbd"]["git_revision"].get<std::string>());
    return 0;
  }};
}

}  // namespace tbd::cli
