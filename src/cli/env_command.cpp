// `tbd env`: the machine and build tbd runs on.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>

#include <ATen/Parallel.h>
#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/core/number_format.h"
#include "tbd/measure/machine/ceilings.h"
#include "tbd/measure/machine/device.h"
#include "tbd/measure/machine/environment.h"
#include "tbd/measure/machine/peak.h"

namespace tbd::cli {
namespace {

// `tbd env --peak`: measures and caches; runs then report utilisation against it.
int run_peak(const std::string& device_text, int threads, bool json) {
  const c10::Device device = resolve_device(device_text);
  if (threads < 0) throw UsageError("--threads must be positive, got " + std::to_string(threads));
  if (threads > 0) at::set_num_threads(threads);
  threads = at::get_num_threads();
  const std::string key = peak_machine_key(device, threads);
  nlohmann::json entry;
  const std::vector<std::string> dtypes = peak_dtypes(device);
  for (const std::string& dtype : dtypes) {
    if (!json) std::cerr << "measuring " << dtype << " GEMM peak on " << device.str() << " ...\n";
    entry[dtype] = measure_gemm_peak(device, dtype);
    entry[dtype]["datasheet"] = datasheet_peak(device, dtype, threads);
  }
  if (!json) std::cerr << "measuring memory bandwidth and dispatch overhead on " << device.str() << " ...\n";
  entry["memory_bandwidth"] = measure_memory_bandwidth(device);
  entry["dispatch_overhead"] = measure_dispatch_overhead(device);
  store_cached_peak(key, entry);
  if (json) {
    std::cout << nlohmann::json{{"machine", key}, {"cache_file", peak_cache_path()}, {"peak", entry}}.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("machine      {}\n", key);
  for (const std::string& dtype : dtypes) {
    const auto& m = entry[dtype];
    const auto& d = m["datasheet"];
    const std::string measured =
        m["flops_per_s"].is_number()
            ? fmt::format("{:.4g} GFLOP/s measured (cv {:.1f}%, {})", m["flops_per_s"].get<double>() / 1e9,
                          100 * m["cv"].get<double>(), m["provenance"].get<std::string>())
            : "n/a (" + m["not_available"].get<std::string>() + ")";
    const std::string sheet = d["flops_per_s"].is_number()
                                  ? fmt::format("{:.4g} GFLOP/s datasheet ({})", d["flops_per_s"].get<double>() / 1e9,
                                                d["provenance"].get<std::string>())
                                  : "n/a (" + d["not_available"].get<std::string>() + ")";
    std::cout << fmt::format("{:<13}{}\n{:<13}{}\n", std::string("peak ") + dtype, measured, "", sheet);
  }
  const auto& bw = entry["memory_bandwidth"];
  std::cout << fmt::format("bandwidth    {:.4g} GB/s measured (copy {:.4g}, triad {:.4g} GB/s; {})\n",
                           bw["bytes_per_s"].get<double>() / 1e9, bw["copy_bytes_per_s"].get<double>() / 1e9,
                           bw["triad_bytes_per_s"].get<double>() / 1e9, bw["provenance"].get<std::string>());
  const auto& d = entry["dispatch_overhead"];
  std::cout << fmt::format("dispatch     {:.3g} us per operator ({})\n", d["seconds_per_op"].get<double>() * 1e6,
                           d["provenance"].get<std::string>());
  std::cout << fmt::format("cached in    {}\n", peak_cache_path());
  return 0;
}

}  // namespace

Command add_env_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("env", "Show the hardware and software a result would record");
  auto json = std::make_shared<bool>(false);
  auto peak = std::make_shared<bool>(false);
  auto device = std::make_shared<std::string>("cpu");
  auto threads = std::make_shared<int>(0);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->add_flag("--peak", *peak,
                "Measure achievable GEMM FLOP/s (CPU: fp32, bf16 where supported; CUDA: fp32, tf32, bf16, fp16), "
                "memory bandwidth (STREAM copy and triad) and per-operator dispatch overhead, and cache them in " +
                    peak_cache_path() + " (delete the file to forget it; TBD_CACHE_DIR moves it)");
  cmd->add_option("--device", *device, "With --peak: cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--threads", *threads, "With --peak: intra-op threads (default: LibTorch's choice)");
  return {cmd, [json, peak, device, threads]() {
            if (*peak) return run_peak(*device, *threads, *json);
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
              std::cout << "memory       " << format_bytes(env["memory"]["total_bytes"].get<long long>()) << "\n";
            std::cout << fmt::format("os           {} ({} {})\n", env["os"]["distribution"].get<std::string>(),
                                     env["os"]["system"].get<std::string>(), env["os"]["release"].get<std::string>());
            std::cout << fmt::format("compiler     {}\n", env["compiler"].get<std::string>());
            std::cout << fmt::format("libtorch     {} (intra-op threads {}, inter-op {})\n",
                                     env["libtorch"]["version"].get<std::string>(),
                                     env["threads"]["intra_op"].get<int>(), env["threads"]["inter_op"].get<int>());
            std::cout << fmt::format("  from       {}\n", env["libtorch"].value("source", "not recorded"));
            std::cout << fmt::format(
                "cuda         {}\n",
                acc["cuda_available"].get<bool>()
                    ? fmt::format("{} device(s)", acc["cuda_devices"].get<int>())
                    : std::string(acc["cuda_build"].get<bool>() ? "no device visible" : "not in this LibTorch build"));
            for (const auto& d : acc.value("devices", nlohmann::json::array()))
              if (d.contains("name"))
                std::cout << fmt::format("gpu {}        {}, {:.0f} GiB, {} SMs, compute {}\n", d["index"].get<int>(),
                                         d["name"].get<std::string>(),
                                         d["total_memory_bytes"].get<double>() / (1024.0 * 1024 * 1024),
                                         d["multiprocessors"].get<int>(), d["compute_capability"].get<std::string>());
            if (acc.contains("nccl_backend"))
              std::cout << fmt::format("nccl         {}\n", acc["nccl_backend"].get<bool>()
                                                                ? "built in (distributed CUDA runs)"
                                                                : "not in this build");
            std::cout << fmt::format("tbd          {} ({})\n", env["tbd"]["version"].get<std::string>(),
                                     env["tbd"]["git_revision"].get<std::string>());
            return 0;
          }};
}

}  // namespace tbd::cli
