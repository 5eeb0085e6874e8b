// `tbd run WORKLOAD [options]`: one benchmark run, a human summary and
// (optionally) the result JSON.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/measure/cuda_graph_step.h"
#include "tbd/measure/probes/trace_probe.h"
#include "tbd/measure/runner.h"
#include "tbd/output/csv_log.h"
#include "tbd/output/mllog.h"
#include "tbd/output/result_file.h"
#include "tbd/output/summary.h"
#include "tbd/workloads/registry.h"

namespace tbd::cli {

Command add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Benchmark training of one workload");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("workload", a->workload, "Workload name (see `tbd list`)")->required();
  declare_run_options(*cmd, *a);
  cmd->footer(
      "A timed window ends when both --iters and --min-time are reached; --repeat windows are timed.\n"
      "Analysis probes (flops, memory, ops) run in separate iterations after them.\n"
      "Ctrl-C or SIGTERM ends it early and still writes a result marked \"partial\" (exit 130 or 143);\n"
      "a third signal abandons the run.\n"
      "Distributed: --nproc N starts N local workers; under torchrun or Slurm\n"
      "(RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT or SLURM_*) each process is one rank.");

  return {cmd, [a, cmd]() {
            const RunOptions options = resolve(*a);
            const auto probes = resolve_probes(*a);
            if (a->trace.iterations < 1) throw UsageError("--trace-iters must be at least 1");
            const DistEnvironment dist = read_dist_environment();
            const bool per_rank = std::max(options.nproc, dist.world_size) > 1;
            if (!a->trace.path.empty()) check_trace_path(a->trace.path, per_rank, "--trace");
            if (!a->trace.execution_trace.empty())
              check_trace_path(a->trace.execution_trace, per_rank, "--execution-trace");
            const auto workload = create_workload(options.workload);  // an unknown name fails here, listing the known
            // Refused before any worker process starts (A3C is already asynchronous).
            check_data_parallel_supported(workload->info(), std::max(options.nproc, dist.world_size));
            check_activation_checkpointing_supported(workload->info(), options);
            check_grad_accum_supported(workload->info(), options.grad_accum);
            check_sharding_supported(workload->info(), options, dist.source != "none" || options.nproc_given);
            check_embedding_sharding_supported(workload->info(), options, dist.source != "none" || options.nproc_given);
            // --cuda-graphs on where a graph would not be correct: refused before any worker starts.
            const bool sharded =
                options.sharding != Sharding::none || options.embedding_sharding != EmbeddingSharding::replicate;
            decide_cuda_graphs(workload->info(), options,
                               c10::Device(options.device.rfind("cuda", 0) == 0 ? c10::kCUDA : c10::kCPU),
                               dist.distributed() || options.nproc > 1 || sharded);
            if (options.nproc > 1 && dist.source != "none" && !launched_by_local_launcher())
              throw UsageError("--nproc " + std::to_string(options.nproc) +
                               " starts ranks itself, but this process "
                               "already is rank " +
                               std::to_string(dist.rank) + " of " + std::to_string(dist.world_size) + " (" +
                               (dist.source == "slurm" ? "SLURM_PROCID/SLURM_NTASKS" : "RANK/WORLD_SIZE") +
                               " are set): drop --nproc when a launcher starts the ranks, or unset those "
                               "variables to let --nproc start them");
            // The launcher; workers see RANK. --nproc 1 --sharding (or --embedding-sharding):
            // one rank, with its process group.
            if ((options.nproc > 1 || sharded) && dist.source == "none") {
              if (!a->oversubscribe) check_local_ranks_fit(options.nproc, options.device == "cpu");
              return run_local_workers(program_args(), options.nproc);
            }
            if (!a->mllog.empty()) check_log_path(a->mllog, "--mllog");
            if (!a->csv.empty()) check_log_path(a->csv, "--csv");
            install_interrupt_handler();
            const RunOutcome outcome = run_benchmark(options, *workload, probes, a->trace);
            if (outcome.rank != 0) return interrupted_exit_status();  // rank 0 reports for everyone
            // Stopped before any timed iteration (a signal during start-up or warm-up): no
            // figure was measured, and a result without iterations is no result.
            if (interrupt_requested() && outcome.result.value("iterations", nlohmann::json::array()).empty()) {
              std::cerr << "tbd: stopped by " << signal_name(interrupt_signal())
                        << " before any timed iteration; no result written\n";
              return interrupted_exit_status();
            }
            if (!options.out.empty()) write_json_atomically(options.out, outcome.result);
            if (!a->mllog.empty()) append_mllog(a->mllog, outcome.result);
            if (!a->csv.empty()) append_csv(a->csv, outcome.result);
            if (options.json) std::cout << outcome.result.dump(2) << "\n";
            if (!options.quiet) print_summary(options.json ? std::cerr : std::cout, outcome.result, outcome.summary);
            // A trace that could not be written fails the command, after the result it must not cost.
            for (const char* kind : {"trace", "execution_trace"})
              if (const auto& t = outcome.result.value(kind, nlohmann::json()); t.is_object() && t.contains("error"))
                throw Error(t["error"].get<std::string>() + "; the run's result was kept" +
                            (options.out.empty() ? std::string() : " in " + options.out));
            return interrupted_exit_status();  // 130 or 143 after SIGINT or SIGTERM, else 0
          }};
}

}  // namespace tbd::cli
