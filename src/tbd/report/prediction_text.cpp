#include "tbd/report/prediction_text.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace tbd {

void print_prediction(std::ostream& os, const nlohmann::json& doc) {
  os << "predictions for " << doc["base_label"].get<std::string>() << " (" << doc["base"].get<std::string>() << ")\n";
  for (const auto& p : doc["predictions"]) {
    const std::string kind = p["kind"];
    const std::string unit = p.value("unit", std::string("samples/s"));
    if (kind == "data_parallel") {
      const auto& t = p["iteration_ms"];
      os << fmt::format("  {} ranks: {:.4g} {} global ({:.4g} per rank), speed-up {:.2f}, efficiency {:.0f}%\n",
                        p["ranks"].get<int>(), p["global_samples_per_s"].get<double>(), unit,
                        p["per_rank_samples_per_s"].get<double>(), p["speedup"].get<double>(),
                        100 * p["efficiency"].get<double>());
      os << fmt::format(
          "    iteration {:.4g} ms = forward {:.3g} + backward {:.3g} + exposed all-reduce {:.3g} + "
          "bucket copies {:.3g} + optimizer {:.3g} + data/other {:.3g}\n",
          t["total"].get<double>(), t["forward"].get<double>(), t["backward"].get<double>(),
          t["communication_exposed"].get<double>(), t["bucket_copies"].get<double>(), t["optimizer"].get<double>(),
          t["data"].get<double>() + t["other"].get<double>());
      os << "    each rank's step: " << p["rank_phases"].get<std::string>()
         << "\n    all-reduce: " << p["allreduce"].get<std::string>() << "; straggler "
         << fmt::format("{:.3g} ms", t["straggler"].get<double>()) << "\n";
      if (p.value("sparse_allreduce_ms", 0.0) > 0)
        os << fmt::format(
            "    sparse gradients (tables stacked) all-reduced when backward ends, beside the last bucket: {:.3g} ms\n",
            p["sparse_allreduce_ms"].get<double>());
    } else if (kind == "class_speedup" || kind == "roofline") {
      std::string what = "every operator at its roofline ceiling";
      if (kind == "class_speedup") {
        what.clear();
        for (const auto& c : p["classes"])
          what += (what.empty() ? "" : ", ") +
                  fmt::format("{} {:g}x", c["class"].get<std::string>(), c["factor"].get<double>());
      }
      os << fmt::format("  {}: {:.4g} {} (speed-up {:.2f}; iteration {:.4g} -> {:.4g} ms)\n", what,
                        p["samples_per_s"].get<double>(), unit, p["speedup"].get<double>(),
                        p["base_iteration_ms"].get<double>(), p["iteration_ms"].get<double>());
    } else if (kind == "memory_limit") {
      os << fmt::format(
          "  memory limit {:.1f} MiB: fixed {:.1f} MiB + {:.3g} MiB per sample -> largest batch {}, "
          "first doubling that does not fit {}\n",
          p["limit_bytes"].get<double>() / 1048576, p["fixed_bytes"].get<double>() / 1048576,
          p["per_sample_bytes"].get<double>() / 1048576,
          p["largest_fitting_batch"].is_null() ? "none" : p["largest_fitting_batch"].dump(),
          p["first_out_of_memory_doubling"].is_null() ? "none" : p["first_out_of_memory_doubling"].dump());
    }
    if (p.contains("check")) {
      const auto& c = p["check"];
      if (c.contains("not_available"))
        os << "    check: not available: " << c["not_available"].get<std::string>() << "\n";
      else if (c.contains("error"))
        os << fmt::format(
            "    check: measured {:.4g} {} ({}), prediction error {:+.1f}% ({})\n",
            c["measured_global_samples_per_s"].get<double>(), unit,
            c["measured_process_cv"].is_number() ? fmt::format("mean of {} runs, CV {:.1f}%", c["runs"].size(),
                                                               100 * c["measured_process_cv"].get<double>())
            : c["measured_repetition_cv"].is_number()
                ? fmt::format("one run, repetition CV {:.1f}%", 100 * c["measured_repetition_cv"].get<double>())
                : std::string("one run"),
            100 * c["error"].get<double>(), c["result"].get<std::string>());
      else if (c["doubling_steps_off"].is_number())
        os << fmt::format(
            "    check: tbd sweep ran out of memory first at batch {}; prediction {:+.0f} doubling steps "
            "off ({})\n",
            c["measured_first_out_of_memory_batch"].dump(), c["doubling_steps_off"].get<double>(),
            c["sweep"].get<std::string>());
      else
        os << "    check: the sweep found no out-of-memory batch (" << c["sweep"].get<std::string>() << ")\n";
    }
  }
}


}  // namespace tbd
