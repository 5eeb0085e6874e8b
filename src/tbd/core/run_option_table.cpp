#include "tbd/core/run_option_table.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "tbd/core/byte_size.h"
#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/core/settings.h"

namespace tbd {
namespace {

using Spec = RunOptionSpec;
using Json = nlohmann::json;

// "FLAG: must be a whole number in [min, max], got 'TEXT'": what CLI11's
// own conversion would not say (it saturated 99999999999999999999 to
// INT64_MAX and wrapped -1 into unsigned options).
unsigned long long whole_number(const std::string& flag, const std::string& text, unsigned long long min,
                                unsigned long long max) {
  const std::string got = ", got '" + text + "'";
  const auto v = unsigned_from_text(text);
  if (!v) {
    // Digits throughout but beyond 2^64 - 1: too large rather than malformed.
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
      throw UsageError(fmt::format("{}: must be at most {}{}", flag, max, got));
    throw UsageError(fmt::format("{}: must be a whole number in [{}, {}]{}", flag, min, max, got));
  }
  if (*v < min) throw UsageError(fmt::format("{}: must be at least {}{}", flag, min, got));
  if (*v > max) throw UsageError(fmt::format("{}: must be at most {}{}", flag, max, got));
  return *v;
}

// An int option whose range validate() checks, so the message names the
// option as validate() always did; here only the text must be a number.
int integer_option(const std::string& flag, const std::string& text) {
  const auto v = integer_from_text(text);
  if (!v || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max())
    throw UsageError(flag + ": must be a whole number, got '" + text + "'");
  return static_cast<int>(*v);
}

double real_option(const std::string& flag, const std::string& text) {
  const auto v = real_from_text(text);
  if (!v) throw UsageError(flag + ": must be a number, got '" + text + "'");
  return *v;
}

bool on_off(const std::string& flag, const std::string& text) {
  if (text != "on" && text != "off") throw UsageError(flag + " must be on or off, got '" + text + "'");
  return text == "on";
}

Json only_distributed(const RunOptions& o, Json value) { return o.world_size > 1 ? value : Json(); }

std::vector<Spec> make_table() {
  std::vector<Spec> t;
  const auto add = [&t](Spec s) { t.push_back(std::move(s)); };
  add({.flag = "--device",
       .json_key = "device",
       .help = "cpu, cuda or cuda:N",
       .default_text = "cpu",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.device = v; },
       .record = [](const RunOptions& o) { return Json(o.device); }});
  add({.flag = "--batch-size",
       .json_key = "batch_size",
       .help = "Samples per iteration (default: the workload's)",
       .configuration = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             o.batch_size = static_cast<int64_t>(whole_number("--batch-size", v, 1, kMaxBatchSize));
           },
       // 0 is "the workload's default", which a run resolves before it records its options.
       .record = [](const RunOptions& o) { return o.batch_size > 0 ? Json(o.batch_size) : Json(); }});
  add({.flag = "--grad-accum",
       .json_key = "grad_accum",
       .help = "Gradient accumulation: micro-batches of --batch-size per optimizer step (one iteration)",
       .default_text = "1",
       .configuration = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             o.grad_accum = static_cast<int64_t>(whole_number("--grad-accum", v, 1, kMaxGradAccum));
           },
       .record = [](const RunOptions& o) { return Json(o.grad_accum); }});
  add({.flag = "--precision",
       .json_key = "precision",
       .help = "fp32, tf32 (CUDA), bf16 (autocast) or fp16 (autocast, CUDA)",
       .default_text = "fp32",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.precision = parse_precision(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.precision)); }});
  add({.flag = "--optimizer-impl",
       .json_key = "optimizer_impl",
       .help = "Optimizer step: fused (ATen's fused kernels), foreach (multi-tensor ops) or loop "
               "(LibTorch's per-parameter step); an ablation switch",
       .default_text = "fused",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.optimizer_impl = parse_optimizer_impl(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.optimizer_impl)); }});
  add({.flag = "--memory-format",
       .json_key = "memory_format",
       .help = "Layout of resnet50's tensors: auto (the faster for the device), channels_last or "
               "contiguous; an ablation switch",
       .default_text = "auto",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.memory_format = parse_memory_format(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.memory_format)); }});
  add({.flag = "--host-allocator",
       .json_key = "host_allocator",
       .help = "Freed host memory: retain (kept for the next iteration, no page faults in a steady "
               "step) or system (glibc's defaults); an ablation switch",
       .default_text = "retain",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.host_allocator = parse_host_allocator(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.host_allocator)); }});
  add({.flag = "--cuda-graphs",
       .json_key = "cuda_graphs",
       .help = "Capture the training iteration in a CUDA graph and replay it: off, on (refused with the reason "
               "where it would not be correct) or auto (on where correct); CUDA only",
       .default_text = "off",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.cuda_graphs = parse_cuda_graphs(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.cuda_graphs)); }});
  add({.flag = "--activation-checkpointing",
       .json_key = "activation_checkpointing",
       .help = "Transformer blocks that re-run their forward in backward instead of keeping activations: none, "
               "full (every block) or selective=K (every K-th; selective: K 2); gpt and transformer",
       .default_text = "none",
       .configuration = true,
       .parse = [](RunOptions& o,
                   const std::string& v) { o.activation_checkpointing = parse_activation_checkpointing(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.activation_checkpointing)); }});
  add({.flag = "--threads",
       .json_key = "threads",
       .help = "Intra-op threads; 0 or omitted: LibTorch's choice (one per core). The result records the number "
               "used",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.threads = integer_option("--threads", v); },
       .record = [](const RunOptions& o) { return Json(o.threads); }});
  add({.flag = "--scale",
       .json_key = "scale",
       .help = "full (published model), small, or tiny (for tests)",
       .default_text = "full",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.scale = parse_scale(v); },
       .record = [](const RunOptions& o) { return Json(to_string(o.scale)); }});
  add({.flag = "--set",
       .json_key = "settings",
       .help = "Workload setting key=value (repeatable; see `tbd list W`)",
       .takes = Spec::Takes::values,
       .configuration = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             auto [key, value] = parse_setting(v);
             if (key == "bucket_mb") {  // the one run-wide setting: every workload's all-reduce buckets
               const auto mb = real_from_text(value);
               if (!mb)
                 throw UsageError("--set bucket_mb=" + value + ": give a number of megabytes, e.g. bucket_mb=25");
               o.bucket_mb = *mb;
               return;
             }
             o.settings[key] = value;
           },
       .record = [](const RunOptions& o) { return Json(o.settings); }});
  add({.flag = "--data",
       .json_key = "data",
       .help = "Read the real dataset format here instead of synthetic data",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.data_path = v == "synthetic" ? std::string() : v; },
       .record = [](const RunOptions& o) { return o.data_path.empty() ? Json("synthetic") : Json(o.data_path); }});
  add({.flag = "--data-workers",
       .json_key = "data_workers",
       .help = "Threads of the input pipeline",
       .default_text = "2",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.data_workers = integer_option("--data-workers", v); },
       .record = [](const RunOptions& o) { return Json(o.data_workers); }});
  add({.flag = "--warmup",
       .json_key = "warmup",
       .help = "Warm-up iterations, or 'auto' (until iteration times settle)",
       .default_text = "5",
       .configuration = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             o.warmup_auto = v == "auto";
             if (o.warmup_auto) return;
             const auto n = integer_from_text(v);
             if (!n || *n < std::numeric_limits<int>::min() || *n > std::numeric_limits<int>::max())
               throw UsageError("--warmup must be a count or 'auto', got '" + v + "'");
             o.warmup = static_cast<int>(*n);
           },
       .record = [](const RunOptions& o) { return o.warmup_auto ? Json("auto") : Json(o.warmup); }});
  add({.flag = "--iters",
       .json_key = "iters",
       .help = "Timed iterations per repetition (at least)",
       .default_text = "4",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.iters = integer_option("--iters", v); },
       .record = [](const RunOptions& o) { return Json(o.iters); }});
  add({.flag = "--min-time",
       .json_key = "min_time_s",
       .help = "Seconds per repetition (at least)",
       .default_text = "0",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.min_time = real_option("--min-time", v); },
       .record = [](const RunOptions& o) { return Json(o.min_time); }});
  add({.flag = "--repeat",
       .json_key = "repeat",
       .help = "Repetitions of the timed window (the unit of CIs and compare)",
       .default_text = "5",
       .configuration = true,
       .parse = [](RunOptions& o, const std::string& v) { o.repeat = integer_option("--repeat", v); },
       .record = [](const RunOptions& o) { return Json(o.repeat); }});
  add({.flag = "--instrument-iters",
       .json_key = "instrument_iters",
       .help = "Iterations for the analysis probes (flops, memory, ops) after the timed windows "
               "(default: as many as were timed, at most 5)",
       .configuration = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             o.instrument_iters = v == "auto" ? 0 : integer_option("--instrument-iters", v);
           },
       .record =
           [](const RunOptions& o) { return o.instrument_iters == 0 ? Json("auto") : Json(o.instrument_iters); }});
  add({.flag = "--seed",
       .json_key = "seed",
       .help = "Seed of every random stream, in [0, 2^64 - 1]",
       .default_text = "42",
       .configuration = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             o.seed = whole_number("--seed", v, 0, std::numeric_limits<uint64_t>::max());
           },
       .record = [](const RunOptions& o) { return Json(o.seed); }});
  add({.flag = "--data-stream-rank",
       .json_key = "data_stream_rank",
       .help = "Draw this rank's data stream (tbd predict's copies)",
       .hidden = true,
       .parse =
           [](RunOptions& o, const std::string& v) {
             o.data_stream_rank = static_cast<int>(whole_number("--data-stream-rank", v, 0, 1 << 20));
           },
       .record = [](const RunOptions& o) { return o.data_stream_rank >= 0 ? Json(o.data_stream_rank) : Json(); }});
  add({.flag = "--nproc",
       .help = "Data-parallel worker processes to start on this machine",
       .default_text = "1",
       .parse = [](RunOptions& o, const std::string& v) {
         o.nproc = integer_option("--nproc", v);
         o.nproc_given = true;
       }});
  add({.flag = "--bucket-mb",
       .json_key = "bucket_mb",
       .help = "Gradient all-reduce bucket size (MB)",
       .default_text = "25",
       .parse = [](RunOptions& o, const std::string& v) { o.bucket_mb = real_option("--bucket-mb", v); },
       .record = [](const RunOptions& o) { return only_distributed(o, o.bucket_mb); }});
  add({.flag = "--dist-overlap",
       .json_key = "dist_overlap",
       .help = "on: all-reduce during backward; off: after it",
       .default_text = "on",
       .parse = [](RunOptions& o, const std::string& v) { o.dist_overlap = on_off("--dist-overlap", v); },
       .record = [](const RunOptions& o) { return only_distributed(o, o.dist_overlap); }});
  add({.flag = "--sharding",
       .json_key = "sharding",
       .help = "Data-parallel model state: none (replicated, DDP), optimizer (ZeRO-1), gradients (ZeRO-2), "
               "full (ZeRO-3: parameters too)",
       .default_text = "none",
       .parse = [](RunOptions& o, const std::string& v) { o.sharding = parse_sharding(v); },
       .record =
           [](const RunOptions& o) {
             return o.sharding != Sharding::none ? Json(to_string(o.sharding)) : only_distributed(o, "none");
           }});
  add({.flag = "--embedding-sharding",
       .json_key = "embedding_sharding",
       .help = "Data-parallel embedding tables: replicate (all-reduced), table (each on one rank), row (split "
               "by rows); pooled embeddings by all-to-all (dlrm)",
       .default_text = "replicate",
       .parse = [](RunOptions& o, const std::string& v) { o.embedding_sharding = parse_embedding_sharding(v); },
       .record =
           [](const RunOptions& o) {
             return o.embedding_sharding != EmbeddingSharding::replicate ? Json(to_string(o.embedding_sharding))
                                                                         : only_distributed(o, "replicate");
           }});
  add({.flag = "--memory-limit",
       .json_key = "memory_limit_bytes",
       .help = "Memory one rank may use, e.g. 16G: dlrm refuses embedding tables (and their optimizer state) "
               "beyond it; the memory probe's peak is checked against it",
       .parse = [](RunOptions& o,
                   const std::string& v) { o.memory_limit_bytes = parse_byte_size(v, "--memory-limit"); },
       .record = [](const RunOptions& o) { return o.memory_limit_bytes > 0 ? Json(o.memory_limit_bytes) : Json(); }});
  add({.flag = "--dist-timeout",
       .json_key = "dist_timeout_s",
       .help = "Seconds to wait for peers before failing",
       .default_text = "300",
       .parse = [](RunOptions& o, const std::string& v) { o.dist_timeout_s = real_option("--dist-timeout", v); },
       .record = [](const RunOptions& o) { return only_distributed(o, o.dist_timeout_s); }});
  add({.flag = "--out",
       .help = "Write the result JSON to this file (atomically)",
       .parse = [](RunOptions& o, const std::string& v) {
         // An empty name would mean "no result file" without a word.
         if (v.empty()) throw UsageError("--out needs a file name, got ''");
         o.out = v;
       }});
  add({.flag = "--json",
       .help = "Print the result JSON on stdout (the summary goes to stderr)",
       .takes = Spec::Takes::nothing,
       .parse = [](RunOptions& o, const std::string&) { o.json = true; }});
  add({.flag = "--quiet",
       .help = "No summary and no progress",
       .takes = Spec::Takes::nothing,
       .parse = [](RunOptions& o, const std::string&) { o.quiet = true; }});
  return t;
}

// A recorded value as the text its flag takes: strings as they are, the
// one on/off option's boolean as on/off, numbers as JSON writes them.
std::string flag_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return v.dump();
}

}  // namespace

const std::vector<RunOptionSpec>& run_option_table() {
  static const std::vector<RunOptionSpec> table = make_table();
  return table;
}

const RunOptionSpec* find_run_option(const std::string& flag) {
  for (const auto& spec : run_option_table())
    if (spec.flag == flag) return &spec;
  return nullptr;
}

nlohmann::json to_json(const RunOptions& options) {
  Json j = Json::object();
  for (const auto& spec : run_option_table()) {
    if (spec.json_key.empty()) continue;
    Json v = spec.record(options);
    if (!v.is_null()) j[spec.json_key] = std::move(v);
  }
  if (options.world_size > 1) j["world_size"] = options.world_size;  // where the run was, not an option
  return j;
}

RunOptions run_options_from_json(const nlohmann::json& recorded) {
  if (!recorded.is_object()) throw Error("a result's workload.options must be an object");
  RunOptions o;
  for (const auto& spec : run_option_table()) {
    if (spec.json_key.empty() || !recorded.contains(spec.json_key)) continue;
    const Json& v = recorded[spec.json_key];
    if (v.is_null()) continue;
    try {
      if (spec.takes == Spec::Takes::values) {
        if (!v.is_object()) throw UsageError("an object of key: value was expected");
        for (const auto& [key, value] : v.items()) spec.parse(o, key + "=" + flag_text(value));
      } else if (v.is_object() || v.is_array()) {
        throw UsageError("a single value was expected");
      } else {
        spec.parse(o, flag_text(v));
      }
    } catch (const UsageError& e) {
      throw Error("workload.options." + spec.json_key + " = " + v.dump() + " cannot be read: " + e.what());
    }
  }
  if (recorded.contains("world_size") && recorded["world_size"].is_number_integer())
    o.world_size = recorded["world_size"].get<int>();
  return o;
}

std::vector<std::string> configuration_arguments(const RunOptions& options) {
  static const RunOptions defaults;
  std::vector<std::string> args;
  for (const auto& spec : run_option_table()) {
    if (!spec.configuration) continue;
    const Json v = spec.record(options);
    if (v.is_null() || v == spec.record(defaults)) continue;
    if (spec.takes == Spec::Takes::values) {
      for (const auto& [key, value] : v.items()) args.insert(args.end(), {spec.flag, key + "=" + flag_text(value)});
    } else {
      args.insert(args.end(), {spec.flag, flag_text(v)});
    }
  }
  return args;
}

}  // namespace tbd
