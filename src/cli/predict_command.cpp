// `tbd predict BASE.json [--nproc N] [--faster CLASS=K] [--roofline]
// [--memory-limit SIZE] [--sharding S] [--device-memory SIZE] [--check]`: the options; the study itself (what is
// measured here, the models, the checks) is tbd/study/predict.h.
#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "cli/study_command.h"
#include "tbd/core/byte_size.h"
#include "tbd/core/error.h"
#include "tbd/core/options.h"
#include "tbd/study/predict.h"

namespace tbd::cli {
namespace {

struct PredictArgs {
  PredictRequest request;
  std::string overlap = "on", memory_limit, device_memory, calibrate_into, embedding_sharding = "replicate";
  std::vector<std::string> faster;
  bool json = false;
};

}  // namespace

Command add_predict_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("predict",
                                 "Predict from one result: N data-parallel ranks, an operator class k "
                                 "times faster, every op at its roofline, the batch where memory runs "
                                 "out; --check measures the prediction's error");
  auto a = std::make_shared<PredictArgs>();
  PredictRequest& r = a->request;
  cmd->add_option("base", r.base, "A single-process result (tbd run --out) with the gradients probe")->required();
  cmd->add_option("--nproc", r.nproc, "Data-parallel ranks to predict (measured here unless --bus-gbps is given)");
  cmd->add_option("--bus-gbps", r.bus_gbps,
                  "Plan past this machine: the all-reduce bus bandwidth (GB/s, nccl-tests' busbw) between ranks that "
                  "each have their own device; no local measurement");
  cmd->add_option("--latency-us", r.latency_us, "With --bus-gbps: the all-reduce's fixed latency (µs)")
      ->capture_default_str();
  cmd->add_option("--bucket-mb", r.bucket_mb, "Gradient bucket size of the predicted run (MB)")->capture_default_str();
  cmd->add_option("--dist-overlap", a->overlap, "on: all-reduce during backward; off: after it")->capture_default_str();
  cmd->add_option("--faster", a->faster,
                  "CLASS=K: an operator class (as the ops probe names it) K times faster; "
                  "repeatable (needs the ops probe in the base)");
  cmd->add_flag("--roofline", r.roofline, "Every operator at its roofline ceiling (needs the roofline probe)");
  cmd->add_option("--memory-limit", a->memory_limit,
                  "Predict the batch size at which peak memory exceeds this "
                  "(512M, 8G; needs the memory probe)");
  cmd->add_option("--sharding", r.sharding,
                  "With --nproc: the memory per rank of a sharded run (none, optimizer, gradients, full: ZeRO 0-3)");
  cmd->add_option("--embedding-sharding", a->embedding_sharding,
                  "With --nproc: dlrm's tables placed across the ranks (table, row): no sparse all-reduce, the "
                  "lookups' all-to-alls instead (replicate: the default)")
      ->capture_default_str();
  cmd->add_option("--device-memory", a->device_memory,
                  "With --nproc: whether the predicted peak per rank fits a device this large (80G), and from how "
                  "many ranks it would");
  cmd->add_flag("--check", r.check,
                "Run the predicted configuration (N ranks; tbd sweep --memory-limit) and "
                "report the prediction's error");
  cmd->add_option("--runs", r.runs,
                  "Rounds of each measurement --nproc makes (co-located copies of the base, the "
                  "--check run): processes are the unit of run-to-run noise; means are used")
      ->capture_default_str();
  refuse_empty(cmd->add_option("--dir", r.dir,
                               "Folder for the runs the prediction measures (co-located copies of the base, the "
                               "all-reduce) and the --check runs (default: predict-WORKLOAD)"));
  refuse_empty(cmd->add_option("--out", r.out, "Write the predictions as JSON (tbd.prediction/1)"));
  cmd->add_flag("--json", a->json, "Print the predictions as JSON");
  // Internal: where the launched workers' rank 0 writes the all-reduce times.
  cmd->add_option("--calibrate-into", a->calibrate_into)->group("");
  cmd->footer(
      "Nothing is predicted without a flag: give --nproc, --faster, --roofline or --memory-limit.\n"
      "The model and its limits: docs/metrics.md#prediction.");

  return {cmd, [a, cmd]() {
            PredictRequest& r = a->request;
            r.program = program_args()[0];
            r.command = program_args();
            r.embedding_sharding = parse_embedding_sharding(a->embedding_sharding);  // the workers too
            if (!a->calibrate_into.empty()) return run_predict_worker(r, a->calibrate_into);
            if (a->overlap != "on" && a->overlap != "off")
              throw UsageError("--dist-overlap must be on or off, got '" + a->overlap + "'");
            r.overlap = a->overlap == "on";
            r.speedups = parse_speedups(a->faster);
            // 0 (or nan) would silently mean "measure here", which --bus-gbps is given to avoid.
            if (cmd->count("--bus-gbps") > 0 && !(r.bus_gbps > 0 && std::isfinite(r.bus_gbps)))
              throw UsageError("--bus-gbps must be a positive number of GB/s, e.g. --bus-gbps 100; got " +
                               cmd->get_option("--bus-gbps")->as<std::string>());
            // Given empty, it is refused by parse_byte_size rather than taken as "no limit".
            if (cmd->count("--memory-limit") > 0)
              r.memory_limit_bytes = parse_byte_size(a->memory_limit, "--memory-limit");
            if (cmd->count("--device-memory") > 0)
              r.device_memory_bytes = parse_byte_size(a->device_memory, "--device-memory");
            if (cmd->count("--sharding") > 0) parse_sharding(r.sharding);  // refused now, with the choices
            return run_study(a->json, [&](std::ostream& human) { return run_predict(r, human); });
          }};
}

}  // namespace tbd::cli
