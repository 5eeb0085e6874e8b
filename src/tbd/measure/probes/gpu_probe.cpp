#include "tbd/measure/probes/gpu_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

namespace tbd {
namespace {

struct Stat {
  int n = 0;
  double mean = 0, max = 0;
};

Stat stat_of(const std::vector<NvmlSample>& samples,
             const std::function<std::optional<double>(const NvmlSample&)>& get) {
  Stat s;
  double sum = 0;
  for (const auto& x : samples) {
    if (auto v = get(x)) {
      sum += *v;
      s.max = s.n == 0 ? *v : std::max(s.max, *v);
      ++s.n;
    }
  }
  if (s.n) s.mean = sum / s.n;
  return s;
}

nlohmann::json to_json(const Stat& s, const char* reason) {
  if (s.n == 0) return {{"mean", nullptr}, {"not_available", reason}};
  return {{"mean", s.mean}, {"max", s.max}, {"samples", s.n}};
}

}  // namespace

GpuProbe::GpuProbe(std::string nvml_library, double period_s)
    : library_(std::move(nvml_library)), period_s_(period_s) {}

GpuProbe::~GpuProbe() { stop_sampler(); }

void GpuProbe::on_run_start(const RunContext& ctx) {
  cuda_ = ctx.device.is_cuda();
  nvml_ = std::make_unique<Nvml>(library_);
  if (!nvml_->available()) {
    why_ = nvml_->why();
    return;
  }
  if (!ctx.device.is_cuda()) {
    why_ = "the run uses " + ctx.device.str() + ", not a GPU";
    return;
  }
  // NVML numbers devices as the driver does; without CUDA_VISIBLE_DEVICES
  // remapping that is the CUDA index.
  gpu_ = ctx.device.has_index() ? ctx.device.index() : 0;
  if (gpu_ >= nvml_->device_count()) {
    why_ = fmt::format("NVML sees {} device(s), not device {}", nvml_->device_count(), gpu_);
    return;
  }
  device_name_ = nvml_->device_name(gpu_);
}

void GpuProbe::on_window_begin(int) {
  if (!why_.empty() || !nvml_) return;
  stop_ = false;
  sampler_ = std::thread([this] {
    while (!stop_.load()) {
      NvmlSample s = nvml_->sample(gpu_);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(period_s_));
    }
  });
}

void GpuProbe::stop_sampler() {
  stop_ = true;
  if (sampler_.joinable()) sampler_.join();
}

void GpuProbe::on_window_end(int) { stop_sampler(); }

void GpuProbe::contribute(nlohmann::json& result) const {
  nlohmann::json g;
  g["kernels"] = kernel_section();
  g["kernel_busy_share"] = g["kernels"]["kernel_busy_share"];
  if (!why_.empty()) {
    g["not_available"] = why_;
    result["gpu"] = g;
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const char* none = "NVML returned no value for this field";
  g["device"] = gpu_;
  g["name"] = device_name_;
  g["sample_period_s"] = period_s_;
  g["utilization_gpu"] = to_json(stat_of(samples_, [](const NvmlSample& s) { return s.gpu_util; }), none);
  g["utilization_memory"] = to_json(stat_of(samples_, [](const NvmlSample& s) { return s.memory_util; }), none);
  g["memory_used_bytes"] = to_json(stat_of(samples_,
                                           [](const NvmlSample& s) -> std::optional<double> {
                                             if (!s.memory_used_bytes) return std::nullopt;
                                             return static_cast<double>(*s.memory_used_bytes);
                                           }),
                                   none);
  g["power_w"] = to_json(stat_of(samples_, [](const NvmlSample& s) { return s.power_w; }), none);
  result["gpu"] = g;
}

nlohmann::json GpuProbe::kernel_section() const {
  if (!kernels_.is_null()) return kernels_;
  return {{"kernel_busy_share", nullptr},
          {"not_available", cuda_ ? "no kernel profile was taken (the run was interrupted)"
                                  : "kernel events come from Kineto's CUDA activity; the run is not on a CUDA "
                                    "device"}};
}

std::string GpuProbe::kernel_line() const {
  const nlohmann::json k = kernel_section();
  if (!k["kernel_busy_share"].is_number()) return "n/a (" + k["not_available"].get<std::string>() + ")";
  std::string line =
      fmt::format("busy {:.0f}% of wall time, {:.3g} ms of kernels per iteration",
                  100 * k["kernel_busy_share"].get<double>(), 1e3 * k["kernel_seconds_per_iteration"].get<double>());
  const auto& top = k["top_kernels"];
  for (size_t i = 0; i < top.size() && i < 3; ++i)
    line += fmt::format("{}{} {:.0f}%", i == 0 ? "; top: " : ", ", top[i]["name"].get<std::string>().substr(0, 48),
                        100 * top[i]["share_of_kernel_time"].get<double>());
  return line;
}

std::vector<std::pair<std::string, std::string>> GpuProbe::summary_lines() const {
  if (!why_.empty()) {
    std::vector<std::pair<std::string, std::string>> lines = {{"GPU", "n/a (" + why_ + ")"}};
    if (cuda_) lines.push_back({"GPU kernels", kernel_line()});
    return lines;
  }
  nlohmann::json r;
  contribute(r);
  const auto& g = r["gpu"];
  auto pct = [](const nlohmann::json& v) {
    return v["mean"].is_number() ? fmt::format("{:.0f}%", 100 * v["mean"].get<double>()) : std::string("n/a");
  };
  auto num = [](const nlohmann::json& v, double scale, const char* unit) {
    return v["mean"].is_number() ? fmt::format("{:.1f} {}", v["mean"].get<double>() * scale, unit) : std::string("n/a");
  };
  return {{"GPU",
           fmt::format("{}: utilization.gpu {} (share of time any kernel ran), memory utilisation {}, "
                       "{} used, {} mean power",
                       device_name_, pct(g["utilization_gpu"]), pct(g["utilization_memory"]),
                       num(g["memory_used_bytes"], 1.0 / (1024.0 * 1024 * 1024), "GiB"), num(g["power_w"], 1.0, "W"))},
          {"GPU kernels", kernel_line()}};
}

}  // namespace tbd
