#include "tbd/output/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "tbd/core/run_option_table.h"

namespace tbd {

namespace {
// "batch 8 images", or with accumulation the micro-batch, the micro-batches
// per step, the ranks and the global batch: "batch 8 × 4 accum × 2 ranks = 64 images".
std::string batch_text(const RunOptions& o, const std::string& unit) {
  if (o.grad_accum <= 1) return fmt::format("batch {} {}", o.batch_size, unit);
  return fmt::format("batch {} × {} accum × {} rank{} = {} {}", o.batch_size, o.grad_accum, o.world_size,
                     o.world_size == 1 ? "" : "s", o.global_batch(), unit);
}
}  // namespace

void print_summary(std::ostream& out, const nlohmann::json& r,
                   const std::vector<std::pair<std::string, std::string>>& probe_lines) {
  const auto& w = r.at("workload");
  const RunOptions o = run_options_from_json(w.at("options"));
  out << fmt::format("{} — {}\n", w.at("name").get<std::string>(), w.at("model").get<std::string>());
  out << fmt::format("  {:<12}scale {}, {}, {}, {}, {} thread{}, data {}\n", "config", to_string(o.scale),
                     batch_text(o, w.value("batch_unit", w.at("sample_unit").get<std::string>())),
                     to_string(o.precision), o.device, o.threads, o.threads == 1 ? "" : "s",
                     o.data_path.empty() ? "synthetic" : o.data_path);
  if (o.activation_checkpointing.enabled()) {
    const auto& c = o.activation_checkpointing;
    const std::string which = c.mode == ActivationCheckpointing::Mode::full
                                  ? "every transformer block"
                                  : fmt::format("one transformer block in {} (the last of each {})", c.every, c.every);
    out << fmt::format("  {:<12}activation checkpointing {}: {} re-runs its forward in backward\n", "checkpoint",
                       to_string(c), which);
  }
  if (!o.settings.empty()) {
    std::vector<std::string> given;
    for (const auto& [key, value] : o.settings) given.push_back(key + "=" + value);
    out << fmt::format("  {:<12}{}\n", "settings", fmt::join(given, ", "));
  }
  // The measurement plan: what the statistics stand on.
  const long long instrumented = r.contains("instrumented") ? r["instrumented"].value("iterations", 0LL) : 0LL;
  const int repeat = o.repeat, iters = o.iters;
  const double min_time = o.min_time;
  out << fmt::format("  {:<12}{} repetition{} of {} timed iteration{}{}; analysis in {} instrumented iteration{}\n",
                     "plan", repeat, repeat == 1 ? "" : "s", iters, iters == 1 ? "" : "s",
                     min_time > 0 ? fmt::format(" (at least {:g} s)", min_time) : "", instrumented,
                     instrumented == 1 ? "" : "s");
  out << fmt::format("  {:<12}{} ({} trainable)\n", "parameters",
                     with_thousands(r.at("model").at("parameters").get<long long>()),
                     with_thousands(r.at("model").at("trainable_parameters").get<long long>()));
  out << fmt::format("  {:<12}{} iteration{} ({})\n", "warm-up", r.at("warmup").at("iterations").get<long long>(),
                     r.at("warmup").at("iterations").get<long long>() == 1 ? "" : "s",
                     r.at("warmup").at("ended_by").get<std::string>());
  for (const auto& [label, text] : probe_lines) out << fmt::format("  {:<12}{}\n", label, text);
  if (r.contains("distributed") && r["distributed"].is_object()) {
    const auto& d = r["distributed"];
    out << fmt::format(
        "  {:<12}{} ranks ({}), global batch {}; figures other than the first throughput "
        "line are rank 0's\n",
        "distributed", d["world_size"].get<int>(), d["backend"].get<std::string>(),
        d["global_batch_size"].get<long long>());
    if (const auto sharding = d.find("sharding");
        sharding != d.end() && sharding->is_object() && sharding->contains("model_state_bytes_per_rank")) {
      const auto& bytes = (*sharding)["model_state_bytes_per_rank"];
      const auto mib = [&](const char* key) { return bytes[key].get<double>() / (1024.0 * 1024.0); };
      out << fmt::format(
          "  {:<12}{} (ZeRO-{}): model state per rank {:.1f} MiB = weights {:.1f} + gradients {:.1f} + "
          "optimizer state {:.1f}\n",
          "sharding", (*sharding)["strategy"].get<std::string>(), (*sharding)["zero_stage"].get<int>(), mib("total"),
          mib("weights"), mib("gradients"), mib("optimizer_state"));
      if (const auto units = sharding->find("units"); units != sharding->end() && units->is_object())
        out << fmt::format(
            "  {:<12}{} units, parameters gathered at once at most {:.1f} MiB (largest unit {:.1f}); linear "
            "weights gathered in {}, gradients reduced in {}\n",
            "", (*units)["count"].get<long long>(), (*units)["peak_gathered_bytes"].get<double>() / (1024.0 * 1024.0),
            (*units)["largest_unit_bytes"].get<double>() / (1024.0 * 1024.0),
            units->value("gathered_precision", std::string("Float")),
            units->value("gradient_reduce_precision", std::string("Float")));
    }
  }
  if (r.value("partial", false)) out << "  PARTIAL: interrupted before the timed windows completed\n";
}

}  // namespace tbd
