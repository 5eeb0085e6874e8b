#include "tbd/measure/probes/cpu_probe.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>

#include <chrono>

namespace tbd {
namespace {

void process_times(double& user, double& system) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  user = static_cast<double>(ru.ru_utime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_utime.tv_usec);
  system = static_cast<double>(ru.ru_stime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_stime.tv_usec);
}

double wall_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

}  // namespace

void CpuProbe::on_run_start(const RunContext&) {
  threads_ = at::get_num_threads();
  available_cores_ = affinity_cores();
}

void CpuProbe::on_window_begin(int) {
  process_times(user0_, system0_);
  wall0_ = wall_now();
}

void CpuProbe::on_window_end(int) {
  double user = 0, system = 0;
  process_times(user, system);
  user_s_ += user - user0_;
  system_s_ += system - system0_;
  wall_s_ += wall_now() - wall0_;
}

void CpuProbe::contribute(nlohmann::json& result) const {
  const double cpu = user_s_ + system_s_;
  nlohmann::json c = {{"user_s", user_s_},
                      {"system_s", system_s_},
                      {"wall_s", wall_s_},
                      {"intra_op_threads", threads_},
                      {"available_cores", available_cores_}};
  if (wall_s_ > 0) {
    c["utilisation"] = cpu / (wall_s_ * threads_);
    c["busy_cores"] = cpu / wall_s_;
    c["share_of_available_cores"] = cpu / (wall_s_ * available_cores_);
  }
  result["cpu"] = c;
}

std::vector<std::pair<std::string, std::string>> CpuProbe::summary_lines() const {
  if (wall_s_ <= 0) return {};
  const double cpu = user_s_ + system_s_;
  return {{"CPU", fmt::format("{:.0f}% of {} intra-op thread{} ({:.2f} busy cores of {} available)",
                              100 * cpu / (wall_s_ * threads_), threads_, threads_ == 1 ? "" : "s", cpu / wall_s_,
                              available_cores_)}};
}

}  // namespace tbd
