#include "tbd/measure/probes/energy_probe.h"

#include <fmt/format.h>

#include "tbd/core/workload.h"

namespace tbd {

EnergyProbe::EnergyProbe(std::string powercap_root, std::string nvml_library)
    : powercap_root_(std::move(powercap_root)), nvml_library_(std::move(nvml_library)) {}

void EnergyProbe::on_run_start(const RunContext& ctx) {
  unit_ = ctx.info.sample_unit;
  rapl_ = std::make_unique<Rapl>(powercap_root_);
  if (!ctx.device.is_cuda()) {
    nvml_why_ = "the run uses " + ctx.device.str() + ", not a GPU";
    return;
  }
  nvml_ = std::make_unique<Nvml>(nvml_library_);
  gpu_ = ctx.device.has_index() ? ctx.device.index() : 0;
  if (!nvml_->available())
    nvml_why_ = nvml_->why();
  else if (!nvml_->total_energy_j(gpu_))
    nvml_why_ = "this GPU or driver has no NVML energy counter (Volta or newer)";
}

void EnergyProbe::on_window_begin(int) {
  if (rapl_ && rapl_->available()) {
    rapl_->sample();
    rapl_before_ = rapl_->joules();
  }
  if (nvml_why_.empty()) nvml_begin_j_ = nvml_->total_energy_j(gpu_);
}

// Reading at every measured iteration keeps each RAPL interval far shorter
// than a counter wrap (tens of seconds at full package power).
void EnergyProbe::on_iteration_end(const IterationRecord& r) {
  if (!r.measured) return;
  samples_ += static_cast<double>(r.samples);
  seconds_ += r.seconds;
  if (rapl_ && rapl_->available()) rapl_->sample();
}

void EnergyProbe::on_window_end(int) {
  if (rapl_ && rapl_->available()) {
    rapl_->sample();
    rapl_j_ += rapl_->joules() - rapl_before_;
  }
  if (nvml_why_.empty() && nvml_begin_j_) {
    if (auto end = nvml_->total_energy_j(gpu_)) nvml_j_ += *end - *nvml_begin_j_;
  }
}

void EnergyProbe::contribute(nlohmann::json& result) const {
  nlohmann::json e;
  e["unit"] = "J";
  nlohmann::json sources = nlohmann::json::object();
  double joules = 0;
  bool any = false;
  if (rapl_ && rapl_->available()) {
    sources["rapl"] = {
        {"joules", rapl_j_}, {"zones", rapl_->zone_names()}, {"scope", "CPU packages (whole sockets, every process)"}};
    joules += rapl_j_;
    any = true;
  } else {
    sources["rapl"] = {{"joules", nullptr}, {"not_available", rapl_ ? rapl_->why() : "the run did not start"}};
  }
  if (nvml_why_.empty() && nvml_) {
    sources["nvml"] = {{"joules", nvml_j_}, {"gpu", gpu_}, {"scope", "the run's GPU (whole board)"}};
    joules += nvml_j_;
    any = true;
  } else {
    sources["nvml"] = {{"joules", nullptr}, {"not_available", nvml_why_}};
  }
  e["sources"] = sources;
  e["seconds"] = seconds_;
  if (any && samples_ > 0) {
    e["joules"] = joules;
    e["joules_per_sample"] = joules / samples_;
    e["sample_unit"] = unit_;
    e["average_watts"] = seconds_ > 0 ? nlohmann::json(joules / seconds_) : nlohmann::json(nullptr);
  } else {
    e["joules"] = nullptr;
    e["joules_per_sample"] = nullptr;
    e["not_available"] =
        !any ? "no energy source: RAPL: " + sources["rapl"]["not_available"].get<std::string>() + "; NVML: " + nvml_why_
             : "no measured iteration completed";
  }
  result["energy"] = e;
}

std::vector<std::pair<std::string, std::string>> EnergyProbe::summary_lines() const {
  nlohmann::json r;
  contribute(r);
  const auto& e = r["energy"];
  if (e["joules_per_sample"].is_null()) return {{"energy", "n/a (" + e["not_available"].get<std::string>() + ")"}};
  std::string which;
  for (const auto& [k, v] : e["sources"].items())
    if (v["joules"].is_number()) which += (which.empty() ? "" : " + ") + k;
  return {
      {"energy", fmt::format("{:.4g} J per sample ({}), {:.4g} W average, from {}",
                             e["joules_per_sample"].get<double>(), unit_, e["average_watts"].get<double>(), which)}};
}

}  // namespace tbd
