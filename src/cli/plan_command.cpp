// `tbd plan WORKLOAD [options]`: the memory one training step will hold,
// from the model's shapes, before any run, and whether it fits a device.
// It takes the `tbd run` options that shape a step's memory, so the plan is
// of exactly the run those options would start.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "tbd/core/byte_size.h"
#include "tbd/core/error.h"
#include "tbd/core/number_format.h"
#include "tbd/core/zero_memory.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/measure/machine/cuda_device_info.h"
#include "tbd/measure/machine/device.h"
#include "tbd/measure/runner.h"
#include "tbd/output/summary.h"
#include "tbd/workloads/registry.h"

namespace tbd::cli {
namespace {

// The options a step's memory depends on; the rest of `tbd run`'s (timing,
// probes, outputs) change nothing here.
const std::vector<std::string> kPlanOptions = {
    "--device", "--batch-size",         "--grad-accum", "--precision", "--activation-checkpointing", "--scale", "--set",
    "--nproc",  "--embedding-sharding", "--sharding",   "--bucket-mb"};

struct Capacity {
  double bytes = 0;    // 0: unknown
  std::string source;  // where the figure came from
};

// The memory the plan is judged against: --device-memory, else the CUDA
// device's total memory, else this host's available memory (a CPU run).
Capacity device_capacity(const RunOptions& o, const std::string& given) {
  if (!given.empty()) return {static_cast<double>(parse_byte_size(given, "--device-memory")), "--device-memory"};
  if (o.device.starts_with("cuda")) {
    const auto device = resolve_device(o.device);
    const auto info = cuda_device_info(device.has_index() ? device.index() : 0);
    if (info.contains("total_memory_bytes"))
      return {info["total_memory_bytes"].get<double>(), info.value("name", std::string("CUDA device"))};
    return {0, info.value("not_available", std::string("no CUDA device"))};
  }
  const auto available = local_capacity().available_bytes;
  return {static_cast<double>(available), available > 0 ? "this host's available memory (MemAvailable)" : ""};
}

// The fewest ranks (core/zero_memory.h's fewest_ranks) at which each ZeRO
// strategy's plan of this step fits `capacity` bytes per rank; null where
// none does (what sharding does not divide is too large). Empty where the
// workload cannot shard its model state.
nlohmann::json fewest_ranks_that_fit(const Workload& workload, RunOptions options, const Settings& settings,
                                     double capacity) {
  const WorkloadInfo& info = workload.info();
  if (!info.sharding_refusal.empty() || !info.data_parallel_refusal.empty()) return nlohmann::json::object();
  nlohmann::json out = nlohmann::json::object();
  for (const Sharding s : {Sharding::none, Sharding::optimizer, Sharding::gradients, Sharding::full}) {
    options.sharding = s;
    const auto fewest = fewest_ranks([&](int n) {
      options.world_size = n;
      return workload.memory_plan(options, settings)->peak_bytes <= capacity;
    });
    out[to_string(s)] = fewest ? nlohmann::json(*fewest) : nlohmann::json();
  }
  return out;
}

std::string both_units(double bytes) {
  // GiB as the rest of tbd prints memory; GB as datasheets and papers do.
  if (bytes < 1e9) return format_bytes(bytes);
  return fmt::format("{} ({:.1f} GB)", format_bytes(bytes), bytes / 1e9);
}

// "; rank 0 of 64, --sharding full (ZeRO-3)" for a data-parallel plan.
std::string rank_text(const RunOptions& o) {
  if (o.embedding_sharding != EmbeddingSharding::replicate)
    return fmt::format("; rank 0 of {}, tables {}", o.world_size, to_string(o.embedding_sharding));
  if (o.sharding != Sharding::none)
    return fmt::format("; rank 0 of {}, --sharding {} (ZeRO-{})", o.world_size, to_string(o.sharding),
                       zero_stage(o.sharding));
  return o.world_size > 1 ? fmt::format("; rank 0 of {}, replicated", o.world_size) : std::string();
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "plan",
      "The memory one training step will hold (model state, activations, peak), from the model's shapes "
      "before any run, and whether it fits a device");
  auto a = std::make_shared<RunArgs>();
  auto device_memory = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("workload", a->workload, "Workload name (llama)")->required();
  declare_table_options(*cmd, *a, kPlanOptions);
  cmd->add_option("--device-memory", *device_memory,
                  "The device memory to plan for (80G, 141GB; default: the --device's memory, or this host's "
                  "available memory for a CPU run)");
  cmd->add_flag("--json", *json, "Print the plan as JSON");
  cmd->footer(
      "Example: tbd plan llama --set size=8b --precision bf16 --activation-checkpointing full --device-memory 80G\n"
      "         tbd plan llama --set size=70b --precision bf16 --activation-checkpointing full --device-memory 80G "
      "--nproc 32 --sharding full\n"
      "The formulas: docs/metrics.md#memory-plan. Exit status: 0 planned (fitting or not), 2 bad usage.");
  return {cmd, [a, device_memory, json]() {
            RunOptions options = resolve(*a);
            const auto workload = create_workload(options.workload);  // an unknown name fails here, listing the known
            const WorkloadInfo& info = workload->info();
            check_activation_checkpointing_supported(info, options);
            check_grad_accum_supported(info, options.grad_accum);
            check_embedding_sharding_supported(info, options, options.nproc_given);
            check_sharding_supported(info, options, options.nproc_given);
            refuse_data_parallel(info, options.nproc);
            options.world_size = options.nproc;  // the plan is rank 0's of --nproc N
            const Settings settings(info.settings, options.settings, info.name);
            if (options.batch_size == 0) options.batch_size = info.default_batch;
            const auto plan = workload->memory_plan(options, settings);
            if (!plan)
              throw UsageError("tbd plan has no shape model of " + info.name +
                               "'s memory (it has one for llama and dlrm); measure it instead: tbd run " + info.name +
                               " --probes memory, and tbd predict RESULT --memory-limit SIZE for the batch that fits");
            const Capacity capacity = device_capacity(options, *device_memory);
            nlohmann::json out = to_json(*plan);
            out["workload"] = {{"name", info.name},
                               {"model", workload->model_title(settings)},
                               {"scale", to_string(options.scale)},
                               {"batch_size", options.batch_size},
                               {"grad_accum", options.grad_accum},
                               {"precision", to_string(options.precision)},
                               {"device", options.device},
                               {"ranks", options.world_size},
                               {"sharding", to_string(options.sharding)},
                               {"embedding_sharding", to_string(options.embedding_sharding)}};
            if (capacity.bytes > 0) {
              out["device_memory"] = {{"bytes", capacity.bytes}, {"source", capacity.source}};
              out["fits"] = plan->peak_bytes <= capacity.bytes;
              out["fewest_ranks_that_fit"] = fewest_ranks_that_fit(*workload, options, settings, capacity.bytes);
            } else {
              out["device_memory"] = {{"not_available", capacity.source.empty() ? "unknown" : capacity.source}};
              out["fits"] = nullptr;
            }
            if (*json) {
              std::cout << out.dump(2) << "\n";
              return 0;
            }
            std::cout << fmt::format("{}\n  {} scale: {} parameters, batch {} x {} micro-batches, {}, {}{}\n",
                                     workload->model_title(settings), to_string(options.scale),
                                     with_thousands(plan->parameters), options.batch_size, options.grad_accum,
                                     to_string(options.precision), options.device, rank_text(options));
            const auto print_terms = [](const char* title, const std::vector<MemoryPlanTerm>& terms, double total) {
              std::cout << fmt::format("  {:<26} {:>24}\n", title, both_units(total));
              for (const auto& t : terms)
                std::cout << fmt::format("    {:<24} {:>24}  {}\n", t.name, both_units(t.bytes), t.formula);
            };
            print_terms("model state", plan->model_state, plan->model_state_bytes());
            print_terms("activations / micro-batch", plan->activations, plan->activation_bytes());
            double transient = 0;
            for (const auto& t : plan->transients) transient += t.bytes;
            print_terms("transients at the peak", plan->transients, transient);
            std::cout << fmt::format("  {:<26} {:>24}  at {}\n", "peak", both_units(plan->peak_bytes),
                                     plan->peak_moment);
            if (capacity.bytes > 0) {
              const bool fits = plan->peak_bytes <= capacity.bytes;
              std::cout << fmt::format("  {} {} of {} ({})\n",
                                       fits ? "fits:" : "does not fit:", both_units(plan->peak_bytes),
                                       both_units(capacity.bytes), capacity.source);
              if (!fits && plan->model_state_bytes() > capacity.bytes)
                std::cout << "  the model state alone (" << both_units(plan->model_state_bytes())
                          << (info.shardable_embedding_tables
                                  ? ") exceeds it: place the tables across ranks (--nproc N --embedding-sharding "
                                    "row or table) or cap them (--set max_rows=N)\n"
                                  : ") exceeds it: shard it across ranks (ZeRO/FSDP) or choose a smaller --set "
                                    "size\n");
              else if (!fits)
                std::cout << "  the activations make the difference: --activation-checkpointing full, a smaller "
                             "--batch-size (with --grad-accum for the same step batch) or a shorter context\n";
              const auto& fewest = out["fewest_ranks_that_fit"];
              if (!fits && !fewest.empty()) {
                std::cout << "  fewest ranks that fit (a power of two; tbd plan ... --nproc N --sharding S):";
                for (const Sharding s : {Sharding::none, Sharding::optimizer, Sharding::gradients, Sharding::full}) {
                  const auto& n = fewest.at(to_string(s));
                  std::cout << fmt::format("{} {} {}", s == Sharding::none ? "" : ";", to_string(s),
                                           n.is_null() ? "never" : std::to_string(n.get<int>()));
                }
                std::cout << "\n";
              }
            } else {
              std::cout << "  fits: not available (" << (capacity.source.empty() ? "unknown" : capacity.source)
                        << "); give --device-memory\n";
            }
            std::cout << "  assumed: ";
            for (size_t i = 0; i < plan->assumptions.size(); ++i) std::cout << (i ? "; " : "") << plan->assumptions[i];
            std::cout << "\n";
            return 0;
          }};
}

}  // namespace tbd::cli
