#include "tbd/measure/probes/comm_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "tbd/core/options.h"
#include "tbd/core/statistics.h"
#include "tbd/dist/gradient_reducer.h"

namespace tbd {

CommFigures analyse_synchronisation(const CommIteration& it) {
  CommFigures f;
  f.exposed_wait_s = it.wait_end_s - it.backward_end_s;
  // Busy time is the union of the buckets' in-flight intervals; hidden is its
  // part before backward's computation ended.
  std::vector<std::pair<double, double>> spans;
  for (const auto& b : it.buckets) {
    spans.emplace_back(b.launched_s, b.done_s);
    f.bytes += static_cast<double>(b.bytes);
    if (b.sparse) continue;  // allgathers: no bus bandwidth in the all-reduce convention
    ++f.buckets;
    // NCCL times the collective on the device; Gloo's is read on the host.
    f.bucket_seconds.push_back(b.device_seconds.value_or(b.done_s - b.launched_s));
    f.bucket_bytes.push_back(static_cast<double>(b.bytes));
  }
  std::sort(spans.begin(), spans.end());
  auto add = [&](double begin, double end) {
    f.busy_s += end - begin;
    const double hidden_end = std::min(end, it.backward_end_s);
    if (hidden_end > begin) f.hidden_s += hidden_end - begin;
  };
  double begin = 0, end = 0;
  bool open = false;
  for (const auto& [a, e] : spans) {
    if (open && a <= end) {
      end = std::max(end, e);
    } else {
      if (open) add(begin, end);
      begin = a, end = e, open = true;
    }
  }
  if (open) add(begin, end);
  return f;
}

void CommProbe::on_run_start(const RunContext& ctx) {
  reducer_ = ctx.gradient_reducer;
  sharded_ = ctx.sharded != nullptr;
  world_ = ctx.options.world_size;
  if (reducer_) overlap_ = reducer_->overlap();
}

void CommProbe::on_iteration_end(const IterationRecord& r) {
  if (!reducer_) return;
  const auto history = reducer_->take_history();  // warm-up iterations are dropped here too
  if (!r.measured || history.empty()) return;
  // An iteration may synchronise more than once (wgan: after each critic and
  // generator backward); its figures are the sums over its synchronisations.
  double busy = 0, hidden = 0, exposed = 0, bytes = 0, weighted = 0, timed_bytes = 0;
  int buckets = 0;
  double collectives = 0;
  for (const auto& sync : history) {
    collectives += static_cast<double>(sync.buckets.size());
    const CommFigures it = analyse_synchronisation(sync);
    busy += it.busy_s;
    hidden += it.hidden_s;
    exposed += it.exposed_wait_s;
    bytes += it.bytes;
    buckets += it.buckets;
    // nccl-tests convention per bucket: algbw = bytes / time, busbw = algbw · 2(n−1)/n.
    for (size_t b = 0; b < it.bucket_seconds.size(); ++b)
      if (it.bucket_seconds[b] > 0) {
        weighted += it.bucket_bytes[b] * (it.bucket_bytes[b] / it.bucket_seconds[b]);
        timed_bytes += it.bucket_bytes[b];
      }
  }
  busy_s_.push_back(busy);
  hidden_s_.push_back(hidden);
  exposed_s_.push_back(exposed);
  bytes_.push_back(bytes);
  buckets_.push_back(buckets);
  synchronisations_.push_back(static_cast<double>(history.size()));
  collectives_.push_back(collectives);
  if (timed_bytes > 0) busbw_.push_back(weighted / timed_bytes * 2.0 * (world_ - 1) / world_);
}

void CommProbe::contribute(nlohmann::json& result) const {
  if (!reducer_) {
    result["comm"] = {{"not_available", sharded_ ? "sharded run (--sharding): its reduce-scatters and all-gathers "
                                                   "are not timed by the comm probe yet"
                                                 : "single-process run: no gradient communication"}};
    return;
  }
  nlohmann::json c = {{"backend", "gloo"},
                      {"algorithm", "all-reduce (sum, then divide by world size), bucketed"},
                      {"overlap", overlap_},
                      {"iterations", busy_s_.size()}};
  if (!busy_s_.empty()) {
    const double busy = std::accumulate(busy_s_.begin(), busy_s_.end(), 0.0);
    const double hidden = std::accumulate(hidden_s_.begin(), hidden_s_.end(), 0.0);
    c.update({{"bytes_per_iteration", mean_of(bytes_)},
              {"buckets", buckets_.back()},
              {"synchronisations_per_iteration", mean_of(synchronisations_)},
              {"allreduces_per_iteration", mean_of(collectives_)},
              {"allreduce_s_mean", mean_of(busy_s_)},
              {"allreduce_s_median", percentile(busy_s_, 0.5)},
              {"exposed_wait_s_mean", mean_of(exposed_s_)},
              {"hidden_share", busy > 0 ? hidden / busy : 0.0}});
    if (!busbw_.empty())
      c["bus_bandwidth_bytes_per_s"] = mean_of(busbw_);
    else
      c["bus_bandwidth_bytes_per_s"] = nullptr;
  }
  result["comm"] = c;
}

std::vector<std::pair<std::string, std::string>> CommProbe::summary_lines() const {
  if (!reducer_ || busy_s_.empty()) return {};
  const double busy = std::accumulate(busy_s_.begin(), busy_s_.end(), 0.0);
  const double hidden = std::accumulate(hidden_s_.begin(), hidden_s_.end(), 0.0);
  return {{"all-reduce", fmt::format("{:.3g} ms per iteration for {:.3g} MB, {:.0f}% hidden under backward, "
                                     "{:.3g} ms exposed wait, bus bandwidth {}",
                                     1e3 * mean_of(busy_s_), mean_of(bytes_) / 1e6,
                                     busy > 0 ? 100 * hidden / busy : 0.0, 1e3 * mean_of(exposed_s_),
                                     busbw_.empty() ? std::string("n/a (no timed bucket)")
                                                    : fmt::format("{:.3g} GB/s", mean_of(busbw_) / 1e9))}};
}

}  // namespace tbd
