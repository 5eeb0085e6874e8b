#include "tbd/measure/probes/data_probe.h"

#include <fmt/format.h>

#include <numeric>

#include "tbd/core/statistics.h"

namespace tbd {

void DataProbe::on_iteration_end(const IterationRecord& r) {
  if (!r.measured) return;
  wait_s_.push_back(r.data_wait_s);
  iteration_s_ += r.seconds;
}

double DataProbe::stall_share() const {
  const double wait = std::accumulate(wait_s_.begin(), wait_s_.end(), 0.0);
  return iteration_s_ > 0 ? wait / iteration_s_ : 0;
}

void DataProbe::contribute(nlohmann::json& result) const {
  nlohmann::json d = {{"iterations", wait_s_.size()}};
  if (!wait_s_.empty()) {
    const Summary s = summarize(wait_s_);
    d.update({{"wait_total_s", std::accumulate(wait_s_.begin(), wait_s_.end(), 0.0)},
              {"wait_mean_s", s.mean},
              {"wait_median_s", s.median},
              {"wait_p95_s", s.p95},
              {"stall_share", stall_share()}});
  }
  result["data"] = d;
}

std::vector<std::pair<std::string, std::string>> DataProbe::summary_lines() const {
  if (wait_s_.empty()) return {};
  return {{"data stall", fmt::format("{:.2f}% of iteration time ({:.3g} ms per iteration)", 100 * stall_share(),
                                     1e3 * mean_of(wait_s_))}};
}

}  // namespace tbd
