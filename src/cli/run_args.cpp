#include "cli/run_args.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "tbd/core/error.h"
#include "tbd/core/settings.h"
#include "tbd/measure/probe.h"
#include "tbd/report/result_file.h"
#include "tbd/study/comma_list.h"

namespace tbd::cli {
namespace {

// CLI11 saturates out-of-range integers (99999999999999999999 became
// INT64_MAX) and wraps negative ones into unsigned options (--seed -1 became
// 2^64 - 1): this check reads the text as typed.
CLI::Validator whole_number_option(const std::string& name, unsigned long long min, unsigned long long max) {
  return CLI::Validator(
      [name, min, max](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
        const bool digits = !text.empty() && std::isdigit(static_cast<unsigned char>(text[0]));
        const std::string got = ", got '" + text + "'";
        if (!digits || *end != '\0')
          return "must be a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]" + got;
        if (v < min) return "must be at least " + std::to_string(min) + got;
        if (errno == ERANGE || v > max) return "must be at most " + std::to_string(max) + got;
        return "";
      },
      "", name);
}

}  // namespace

RunArgs::RunArgs() : probes(join_commas(default_probes())) {}

void declare_run_options(CLI::App& cmd, RunArgs& a) {
  RunOptions& o = a.options;
  cmd.add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd.add_option("--batch-size", o.batch_size, "Samples per iteration (default: the workload's)")
      ->check(whole_number_option("--batch-size", 1, kMaxBatchSize));
  cmd.add_option("--precision", a.precision, "fp32, tf32 (CUDA), bf16 (autocast) or fp16 (autocast, CUDA)")
      ->capture_default_str();
  cmd.add_option("--optimizer-impl", a.optimizer_impl,
                 "Optimizer step: fused (ATen's fused kernels), foreach (multi-tensor ops) or loop "
                 "(LibTorch's per-parameter step); an ablation switch")
      ->capture_default_str();
  cmd.add_option("--memory-format", a.memory_format,
                 "Layout of resnet50's tensors: auto (the faster for the device), channels_last or "
                 "contiguous; an ablation switch")
      ->capture_default_str();
  cmd.add_option("--host-allocator", a.host_allocator,
                 "Freed host memory: retain (kept for the next iteration, no page faults in a steady "
                 "step) or system (glibc's defaults); an ablation switch")
      ->capture_default_str();
  cmd.add_option("--threads", o.threads, "Intra-op threads (default: LibTorch's choice)");
  cmd.add_option("--scale", a.scale, "full (published model), small, or tiny (for tests)")->capture_default_str();
  cmd.add_option("--set", a.settings, "Workload setting key=value (repeatable; see `tbd list W`)");
  cmd.add_option("--data", o.data_path, "Read the real dataset format here instead of synthetic data");
  cmd.add_option("--data-workers", o.data_workers, "Threads of the input pipeline")->capture_default_str();
  cmd.add_option("--warmup", a.warmup, "Warm-up iterations, or 'auto' (until iteration times settle)")
      ->capture_default_str();
  cmd.add_option("--iters", o.iters, "Timed iterations per repetition (at least)")->capture_default_str();
  cmd.add_option("--min-time", o.min_time, "Seconds per repetition (at least)")->capture_default_str();
  cmd.add_option("--repeat", o.repeat, "Repetitions of the timed window (the unit of CIs and compare)")
      ->capture_default_str();
  cmd.add_option("--instrument-iters", o.instrument_iters,
                 "Iterations for the analysis probes (flops, memory, ops) after the timed windows "
                 "(default: as many as were timed, at most 5)");
  cmd.add_option("--seed", o.seed, "Seed of every random stream, in [0, 2^64 - 1]")
      ->capture_default_str()
      ->check(whole_number_option("--seed", 0, std::numeric_limits<uint64_t>::max()));
  // Hidden: tbd predict's co-located copies, each standing in for one rank.
  cmd.add_option("--data-stream-rank", o.data_stream_rank, "Draw this rank's data stream (tbd predict's copies)")
      ->check(CLI::NonNegativeNumber)
      ->group("");
  cmd.add_option("--probes", a.probes,
                 "Comma-separated probes (time always runs) from " + join_commas(probe_names()) + ", or all")
      ->capture_default_str();
  cmd.add_option("--nproc", o.nproc, "Data-parallel worker processes to start on this machine")->capture_default_str();
  cmd.add_flag("--oversubscribe", a.oversubscribe,
               "Start --nproc ranks even beyond this machine's CPUs (CPU runs) or available memory");
  cmd.add_option("--bucket-mb", o.bucket_mb, "Gradient all-reduce bucket size (MB)")->capture_default_str();
  cmd.add_option("--dist-overlap", a.overlap, "on: all-reduce during backward; off: after it")->capture_default_str();
  cmd.add_option("--dist-timeout", o.dist_timeout_s, "Seconds to wait for peers before failing")->capture_default_str();
  cmd.add_option("--out", o.out, "Write the result JSON to this file (atomically)");
  cmd.add_option("--trace", a.trace.path,
                 "Write a Chrome/Perfetto trace (Kineto) of a few iterations run after the measured window");
  cmd.add_option("--execution-trace", a.trace.execution_trace,
                 "Write PyTorch's execution trace (operator graph, for Chakra and ASTRA-sim) of the --trace-iters "
                 "iterations; linked to the --trace file when both are given");
  cmd.add_option("--trace-iters", a.trace.iterations, "Iterations in the --trace file")->capture_default_str();
  cmd.add_option("--mllog", a.mllog, "Append MLPerf-style :::MLLOG lines of the run to this file");
  cmd.add_option("--csv", a.csv, "Append one CSV row for the run to this file (header when new)");
  cmd.add_flag("--json", o.json, "Print the result JSON on stdout (the summary goes to stderr)");
  cmd.add_flag("--quiet", o.quiet, "No summary and no progress");
}

RunOptions resolve(const RunArgs& args) {
  RunOptions o = args.options;
  // 0 means "the workload's default" inside; typed by a user it is a mistake.
  if (args.batch_size_given && o.batch_size < 1)
    throw UsageError("--batch-size must be at least 1, got " + std::to_string(o.batch_size));
  o.precision = parse_precision(args.precision);
  o.optimizer_impl = parse_optimizer_impl(args.optimizer_impl);
  o.memory_format = parse_memory_format(args.memory_format);
  o.host_allocator = parse_host_allocator(args.host_allocator);
  o.scale = parse_scale(args.scale);
  if (args.warmup == "auto") {
    o.warmup_auto = true;
  } else {
    try {
      size_t used = 0;
      o.warmup = std::stoi(args.warmup, &used);
      if (used != args.warmup.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw UsageError("--warmup must be a count or 'auto', got '" + args.warmup + "'");
    }
  }
  if (args.overlap != "on" && args.overlap != "off")
    throw UsageError("--dist-overlap must be on or off, got '" + args.overlap + "'");
  o.dist_overlap = args.overlap == "on";
  for (const auto& s : args.settings) {
    auto [key, value] = parse_setting(s);
    if (key == "bucket_mb") {  // the one run-wide setting: every workload's all-reduce buckets
      try {
        size_t used = 0;
        o.bucket_mb = std::stod(value, &used);
        if (used != value.size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw UsageError("--set bucket_mb=" + value + ": give a number of megabytes, e.g. bucket_mb=25");
      }
      continue;
    }
    o.settings[key] = value;
  }
  validate(o);
  if (!o.out.empty()) check_output_path(o.out);
  return o;
}

std::vector<std::string> resolve_probes(const RunArgs& args) {
  const auto probes = args.probes == "all" ? probe_names() : split_commas(args.probes);
  for (const auto& p : probes) make_probe(p);  // unknown names fail before the run
  return probes;
}

PassedRunOptions parse_run_options(const std::vector<std::string>& tokens, const std::string& workload,
                                   const PassThrough& pass) {
  CLI::App scratch{"tbd run options of " + pass.study};
  scratch.set_help_flag();  // --help among run options is a mistake, not a request for run's help
  RunArgs args;
  declare_run_options(scratch, args);
  std::string refused;
  try {
    std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());  // CLI11 takes them from the back
    scratch.parse(reversed);
  } catch (const CLI::ParseError& e) {
    refused = std::string(e.what()) + "; see tbd run --help";  // as `tbd run` itself would say it
  }
  // Before a parse error: `--batch-size x` to a sweep is a sweep's option given in the wrong place.
  for (const auto& name : pass.own)
    if (scratch.count(name) > 0) throw UsageError(pass.study + " sets " + name + " of its runs itself" + pass.own_hint);
  if (!refused.empty()) throw UsageError("the runs of " + pass.study + " were refused: " + refused);
  args.batch_size_given = scratch.count("--batch-size") > 0;
  args.options.workload = workload;
  PassedRunOptions passed;
  passed.tokens = tokens;
  try {
    passed.options = resolve(args);
    passed.probes = resolve_probes(args);
    if (args.trace.iterations < 1) throw UsageError("--trace-iters must be at least 1");
  } catch (const UsageError& e) {
    throw UsageError("the runs of " + pass.study + " were refused: " + e.what());
  }
  return passed;
}

}  // namespace tbd::cli
