// `tbd shapes WORKLOAD [--layers REGEX] [--channels SPEC] [--ratio R]
// [--out FILE]` and the `tbd run` options that shape a layer's input: which
// output-channel counts each convolution and linear layer runs fast at, the
// cliffs, the performance-aware counts and the Amdahl estimate of a pruned
// step (src/tbd/study/shapes.h, docs/analysis.md#tbd-shapes).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "tbd/core/error.h"
#include "tbd/output/result_file.h"
#include "tbd/study/shapes.h"
#include "tbd/workloads/registry.h"

namespace tbd::cli {
namespace {

// What a layer's input inside the model depends on, and the sweep's timing
// (--warmup, --repeat, --iters: calls per repetition).
const std::vector<std::string> kShapesOptions = {"--device",  "--batch-size", "--precision", "--memory-format",
                                                 "--threads", "--scale",      "--set",       "--data",
                                                 "--seed",    "--warmup",     "--iters",     "--repeat"};

bool given(const RunArgs& a, const std::string& flag) {
  return std::any_of(a.given.begin(), a.given.end(), [&](const auto& g) { return g.first == flag; });
}

}  // namespace

Command add_shapes_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "shapes",
      "Which output-channel counts each convolution and linear layer runs fast at: the time against channels "
      "curve at the layer's input shape in the model, its cliffs, the performance-aware counts, and the step "
      "a pruning would give");
  auto a = std::make_shared<RunArgs>();
  auto request = std::make_shared<ShapesRequest>();
  auto out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("workload", a->workload, "Workload name (resnet50)")->required();
  declare_table_options(*cmd, *a, kShapesOptions);
  // The timing options mean the sweep's calls here, not a run's iterations.
  cmd->get_option("--warmup")
      ->description("Calls of each count, forward and training, before any timing")
      ->default_str("2");
  cmd->get_option("--iters")->description("Calls per repetition of each count")->default_str("5");
  cmd->get_option("--repeat")
      ->description("Repetitions of each count, the unit of its confidence interval (2 or more)")
      ->default_str("5");
  cmd->add_option("--layers", request->layers,
                  "The layers to sweep: a regular expression searched in each module path (layer3\\..*conv2); "
                  "default: every convolution and linear layer");
  cmd->add_option("--channels", request->channels,
                  "Output-channel counts: auto (every multiple of 8 from 50% to 100% of the original, and the 7 "
                  "counts below it), LO:HI:STEP (counts or percentages: 50%:100%:8) or a list (56,60,64)")
      ->capture_default_str();
  cmd->add_option("--ratio", request->ratio,
                  "The pruning of the step estimate: keep at most this share of each layer's channels")
      ->capture_default_str();
  refuse_empty(cmd->add_option("--out", *out, "Write the analysis as JSON (tbd.shapes/1; tbd report draws it)"));
  cmd->add_flag("--json", *json, "Print the analysis as JSON instead of the table");
  cmd->footer(
      "Example: tbd shapes resnet50 --scale small --batch-size 8 --layers 'layer3\\.0\\.conv' --out shapes.json\n"
      "The workload's own run (for the shapes and the step time) is 2 warm-up, 3 x 2 timed, 1 instrumented iteration.\n"
      "Definitions: docs/analysis.md#tbd-shapes. Exit status: 0 done, 1 the run or a sweep failed, 2 bad usage.");
  return {cmd, [a, request, out, json]() {
            request->options = resolve(*a);
            if (!out->empty()) check_output_path(*out);
            if (given(*a, "--warmup")) {
              if (request->options.warmup_auto)
                throw UsageError("tbd shapes warms each count up by a number of calls; give --warmup N, not auto");
              request->timing.warmup = request->options.warmup;
            }
            if (given(*a, "--repeat")) request->timing.repeat = request->options.repeat;
            if (given(*a, "--iters")) request->timing.calls = request->options.iters;
            if (request->timing.repeat < 2)
              throw UsageError(
                  "tbd shapes needs --repeat 2 or more: the repetitions give each count's confidence "
                  "interval, and a cliff is judged by them");
            const auto workload = create_workload(request->options.workload);
            const bool quiet = request->options.quiet;
            const auto doc = run_shapes(*request, *workload, [quiet](const std::string& line) {
              if (!quiet) std::cerr << "  sweeping " << line << "\n";
            });
            if (!out->empty()) write_json_atomically(*out, doc);
            if (*json)
              std::cout << doc.dump(2) << "\n";
            else
              std::cout << shapes_table(doc);
            return 0;
          }};
}

}  // namespace tbd::cli
