#include "tbd/measure/model_flops_utilisation.h"

#include <fmt/format.h>

#include <vector>

namespace tbd {
namespace {

const nlohmann::json* at_path(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

}  // namespace

std::optional<nlohmann::json> model_flops_utilisation(const nlohmann::json& result, const nlohmann::json& peaks,
                                                      const std::string& dtype) {
  const auto* per_token = at_path(result, {"workload", "configuration", "model_flops", "per_token"});
  const auto* rate = at_path(result, {"throughput", "samples_per_s"});
  if (!per_token || !per_token->is_number() || !rate || !rate->is_number()) return std::nullopt;
  const double tokens_per_s = rate->get<double>(), flops_per_token = per_token->get<double>();
  const double model_flops_per_s = flops_per_token * tokens_per_s;
  nlohmann::json mfu = nlohmann::json::object();
  for (const char* kind : {"measured", "datasheet"}) {
    const auto& p = peaks.at(kind);
    if (p.at("flops_per_s").is_number() && p.at("flops_per_s").get<double>() > 0)
      mfu[kind] = model_flops_per_s / p.at("flops_per_s").get<double>();
    else
      mfu[kind] = {{"value", nullptr}, {"not_available", p.value("not_available", std::string("no peak known"))}};
  }
  return nlohmann::json{
      {"tokens_per_s_per_device", tokens_per_s},
      {"model_flops_per_token", flops_per_token},
      {"model_flops_per_s", model_flops_per_s},
      {"dtype", dtype},
      {"mfu", mfu},
      {"peak", peaks},
      {"definition",
       "tokens_per_s_per_device: this rank's timed throughput (one rank drives one device); MFU = "
       "model_flops_per_token (workload.configuration.model_flops, PaLM app. B: recomputation excluded) x "
       "tokens/s / peak FLOP/s of the run's precision, measured (tbd env --peak) and datasheet"}};
}

std::string mfu_summary(const nlohmann::json& section) {
  std::vector<std::string> parts;
  for (const char* kind : {"measured", "datasheet"}) {
    const auto& v = section["mfu"][kind];
    const auto& p = section["peak"][kind];
    if (v.is_number())
      parts.push_back(fmt::format("{:.1f}% of the {} {} peak ({:.4g} TFLOP/s)", 100 * v.get<double>(), kind,
                                  section["dtype"].get<std::string>(), p["flops_per_s"].get<double>() / 1e12));
    else
      parts.push_back(fmt::format("n/a against the {} peak ({})", kind, v.value("not_available", std::string())));
  }
  return fmt::format("{:.4g} tokens/s per device; MFU {}; {}", section["tokens_per_s_per_device"].get<double>(),
                     parts[0], parts[1]);
}

}  // namespace tbd
