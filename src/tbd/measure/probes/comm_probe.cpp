#include "tbd/measure/probes/comm_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "tbd/core/options.h"
#include "tbd/core/statistics.h"
#include "tbd/dist/collective_log.h"
#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/sharded_data_parallel.h"

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

double bus_factor(const std::string& kind, int ranks) {
  const double n = ranks;
  return kind == "all-reduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

ShardedCommFigures analyse_sharded(const std::vector<TimedCollective>& collectives) {
  ShardedCommFigures f;
  std::vector<std::pair<double, double>> spans;
  for (const auto& c : collectives) {
    ++f.collectives;
    f.bytes += c.bytes;
    ++f.count_by_kind[c.kind];
    f.bytes_by_kind[c.kind] += c.bytes;
    if (c.done_s >= c.launched_s) spans.emplace_back(c.launched_s, c.done_s);
    if (c.seconds > 0) {
      f.weighted_algbw_by_kind[c.kind] += c.bytes * (c.bytes / c.seconds);
      f.timed_bytes_by_kind[c.kind] += c.bytes;
    }
  }
  std::sort(spans.begin(), spans.end());
  double begin = 0, end = -1;
  for (const auto& [a, e] : spans) {
    if (a <= end) {
      end = std::max(end, e);
      continue;
    }
    if (end >= begin) f.busy_s += end - begin;
    begin = a, end = e;
  }
  if (end >= begin) f.busy_s += end - begin;
  return f;
}

void CommProbe::on_run_start(const RunContext& ctx) {
  reducer_ = ctx.gradient_reducer;
  sharded_ = ctx.sharded;
  model_log_ = ctx.model_collectives;
  if (model_log_ != nullptr) model_log_->start_recording();
  if (sharded_ != nullptr) sharded_->record_history();
  world_ = ctx.options.world_size;
  backend_ = ctx.device.is_cuda() ? "nccl" : "gloo";
  strategy_ = to_string(ctx.options.sharding);
  overlap_ = ctx.options.dist_overlap;
}

bool CommProbe::completion_unreported(const std::string& kind) const {
  // Gloo's all-gather has no completion callback: its end is when tbd first
  // sees it done, so its time is an upper bound. (tbd's Gloo reduce-scatter
  // is an all-reduce, which has one: process_group.h.)
  return backend_ == "gloo" && kind == "all-gather";
}

void CommProbe::sharded_iteration_end() {
  const auto history = sharded_->take_history();  // warm-up iterations are dropped here too
  std::vector<TimedCollective> timed;
  for (const auto& c : history.collectives) {
    TimedCollective t{.kind = c->kind,
                      .bytes = static_cast<double>(c->bytes),
                      .launched_s = c->launched_s,
                      .done_s = c->done_s.load()};
    const auto device = c->device_seconds;
    t.seconds = device ? *device : (t.done_s >= t.launched_s ? t.done_s - t.launched_s : -1);
    timed.push_back(t);
  }
  const ShardedCommFigures f = analyse_sharded(timed);
  busy_s_.push_back(f.busy_s);
  exposed_s_.push_back(history.blocked_s);
  // Hidden: the in-flight time the step did not spend blocked on it.
  hidden_s_.push_back(std::max(0.0, f.busy_s - history.blocked_s));
  bytes_.push_back(f.bytes);
  collectives_.push_back(f.collectives);
  for (const auto& [kind, n] : f.count_by_kind) {
    kind_count_[kind] += n;
    kind_bytes_[kind] += f.bytes_by_kind.at(kind);
  }
  for (const auto& [kind, w] : f.weighted_algbw_by_kind) {
    kind_weighted_[kind] += w;
    kind_timed_bytes_[kind] += f.timed_bytes_by_kind.at(kind);
  }
}

void CommProbe::model_collectives_end(bool measured) {
  const auto logged = model_log_->take();  // warm-up iterations are dropped here too
  if (!measured) return;
  double bytes = 0, seconds = 0;
  for (const auto& c : logged) {
    bytes += c.bytes;
    seconds += c.seconds;
    if (c.seconds > 0) {
      a2a_weighted_ += c.bytes * (c.bytes / c.seconds);
      a2a_timed_bytes_ += c.bytes;
    }
  }
  a2a_count_.push_back(static_cast<double>(logged.size()));
  a2a_bytes_.push_back(bytes);
  a2a_s_.push_back(seconds);
}

// nccl-tests' all-to-all: busbw = algbw · (n−1)/n, algbw bytes-weighted
// over the exchanges; none with one rank (nothing crosses a bus).
std::optional<double> CommProbe::all_to_all_bus_bandwidth() const {
  if (world_ < 2 || a2a_timed_bytes_ <= 0) return std::nullopt;
  return a2a_weighted_ / a2a_timed_bytes_ * bus_factor("all-to-all", world_);
}

void CommProbe::contribute_all_to_all(nlohmann::json& comm) const {
  if (model_log_ == nullptr) return;
  nlohmann::json a = {{"purpose", "the sharded embedding tables' lookups and their gradients (--embedding-sharding)"},
                      {"iterations", a2a_s_.size()}};
  if (!a2a_s_.empty()) {
    a.update({{"per_iteration", mean_of(a2a_count_)},
              {"bytes_per_iteration", mean_of(a2a_bytes_)},
              {"s_mean", mean_of(a2a_s_)},
              {"s_median", percentile(a2a_s_, 0.5)},
              // The step waits on each exchange before it can go on: none is hidden.
              {"exposed_wait_s_mean", mean_of(a2a_s_)}});
    const auto busbw = all_to_all_bus_bandwidth();
    a["bus_bandwidth_bytes_per_s"] = busbw ? nlohmann::json(*busbw) : nlohmann::json(nullptr);
  }
  comm["all_to_all"] = a;
}

void CommProbe::on_iteration_end(const IterationRecord& r) {
  if (model_log_ != nullptr) model_collectives_end(r.measured);
  if (sharded_ != nullptr) {
    if (r.measured) {
      sharded_iteration_end();
    } else {
      sharded_->take_history();  // warm-up: dropped
    }
    return;
  }
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

void CommProbe::contribute_sharded(nlohmann::json& result) const {
  nlohmann::json c = {{"backend", backend_},
                      {"algorithm", "sharded data parallelism (--sharding " + strategy_ +
                                        "): parameter all-gathers, gradient reduce-scatters (all-reduces for "
                                        "optimizer), the clipping norm's all-reduce"},
                      {"overlap", overlap_},
                      {"iterations", busy_s_.size()}};
  if (!busy_s_.empty()) {
    const double busy = std::accumulate(busy_s_.begin(), busy_s_.end(), 0.0);
    const double hidden = std::accumulate(hidden_s_.begin(), hidden_s_.end(), 0.0);
    const double iterations = static_cast<double>(busy_s_.size());
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [kind, n] : kind_count_) {
      nlohmann::json k = {{"per_iteration", n / iterations},
                          {"bytes_per_iteration", kind_bytes_.at(kind) / iterations}};
      const auto timed = kind_timed_bytes_.find(kind);
      // nccl-tests' convention: busbw = algbw · the collective's factor (bytes-weighted mean algbw).
      if (world_ > 1 && timed != kind_timed_bytes_.end() && timed->second > 0)
        k["bus_bandwidth_bytes_per_s"] = kind_weighted_.at(kind) / timed->second * bus_factor(kind, world_);
      else
        k["bus_bandwidth_bytes_per_s"] = nullptr;  // one rank moves nothing over a bus
      k["bus_bandwidth_is_lower_bound"] = completion_unreported(kind);
      kinds[kind] = k;
    }
    c.update({{"bytes_per_iteration", mean_of(bytes_)},
              {"collectives_per_iteration", mean_of(collectives_)},
              {"collective_s_mean", mean_of(busy_s_)},
              {"collective_s_median", percentile(busy_s_, 0.5)},
              {"exposed_wait_s_mean", mean_of(exposed_s_)},
              {"hidden_share", busy > 0 ? hidden / busy : 0.0},
              {"by_kind", kinds}});
  }
  contribute_all_to_all(c);
  result["comm"] = c;
}

void CommProbe::contribute(nlohmann::json& result) const {
  if (sharded_ != nullptr) return contribute_sharded(result);
  if (!reducer_) {
    result["comm"] = {{"not_available", "single-process run: no gradient communication"}};
    return;
  }
  nlohmann::json c = {{"backend", backend_},
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
  contribute_all_to_all(c);
  result["comm"] = c;
}

std::vector<std::pair<std::string, std::string>> CommProbe::summary_lines() const {
  auto lines = gradient_summary_lines();
  if (model_log_ != nullptr && !a2a_s_.empty()) {
    const auto busbw = all_to_all_bus_bandwidth();
    lines.emplace_back("all-to-all",
                       fmt::format("{:.3g} per iteration (embedding lookups and their gradients), {:.3g} ms for {:.3g} "
                                   "MB, all exposed (the step waits on each), bus bandwidth {}",
                                   mean_of(a2a_count_), 1e3 * mean_of(a2a_s_), mean_of(a2a_bytes_) / 1e6,
                                   busbw ? fmt::format("{:.3g} GB/s", *busbw / 1e9) : std::string("n/a (one rank)")));
  }
  return lines;
}

std::vector<std::pair<std::string, std::string>> CommProbe::gradient_summary_lines() const {
  if ((!reducer_ && !sharded_) || busy_s_.empty()) return {};
  const double busy = std::accumulate(busy_s_.begin(), busy_s_.end(), 0.0);
  const double hidden = std::accumulate(hidden_s_.begin(), hidden_s_.end(), 0.0);
  if (sharded_ != nullptr) {
    std::string kinds;
    for (const auto& [kind, n] : kind_count_) {
      const auto timed = kind_timed_bytes_.find(kind);
      const bool has_bw = world_ > 1 && timed != kind_timed_bytes_.end() && timed->second > 0;
      kinds +=
          fmt::format("; {} {:.3g}/iteration{}", kind, n / static_cast<double>(busy_s_.size()),
                      has_bw ? fmt::format(" at {}{:.3g} GB/s bus", completion_unreported(kind) ? ">= " : "",
                                           kind_weighted_.at(kind) / timed->second * bus_factor(kind, world_) / 1e9)
                             : std::string());
    }
    return {{"collectives", fmt::format("{:.3g} ms in flight per iteration for {:.3g} MB, {:.0f}% hidden, {:.3g} ms "
                                        "exposed wait{}",
                                        1e3 * mean_of(busy_s_), mean_of(bytes_) / 1e6,
                                        busy > 0 ? 100 * hidden / busy : 0.0, 1e3 * mean_of(exposed_s_), kinds)}};
  }
  return {{"all-reduce", fmt::format("{:.3g} ms per iteration for {:.3g} MB, {:.0f}% hidden under backward, "
                                     "{:.3g} ms exposed wait, bus bandwidth {}",
                                     1e3 * mean_of(busy_s_), mean_of(bytes_) / 1e6,
                                     busy > 0 ? 100 * hidden / busy : 0.0, 1e3 * mean_of(exposed_s_),
                                     busbw_.empty() ? std::string("n/a (no timed bucket)")
                                                    : fmt::format("{:.3g} GB/s", mean_of(busbw_) / 1e9))}};
}

}  // namespace tbd
