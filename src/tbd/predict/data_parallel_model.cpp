#include "tbd/predict/data_parallel_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "tbd/core/error.h"
#include "tbd/dist/gradient_buckets.h"

namespace tbd {

namespace {

double number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

// As the reducer: Gloo (a CPU run) all-reduces sparse gradients on their
// own; NCCL densifies them into the buckets.
bool sparse_apart(const nlohmann::json& base) {
  return base.at("workload").at("options").value("device", std::string("cpu")).rfind("cpu", 0) == 0;
}

bool is_sparse(const nlohmann::json& g, size_t k) {
  return g.contains("sparse") && g["sparse"].is_array() && k < g["sparse"].size() && g["sparse"][k].is_object();
}

std::vector<GradientShape> gradient_shapes(const nlohmann::json& base, const nlohmann::json& g) {
  const bool apart = sparse_apart(base);
  std::vector<GradientShape> shapes;
  for (size_t k = 0; k < g.at("elements").size(); ++k)
    shapes.push_back({.elements = g["elements"][k].get<int64_t>(),
                      .element_size = g["element_size"][k].get<int64_t>(),
                      .kind = g["kind"][k].get<std::string>(),
                      .sparse = apart && is_sparse(g, k)});
  return shapes;
}

nlohmann::json gradients_of(const nlohmann::json& base) {
  nlohmann::json g = base.value("gradients", nlohmann::json());
  if (!g.is_object() || !g.contains("backward_passes")) {
    if (g.is_object() && g.contains("not_available"))
      throw Error("the base result has no gradient timeline: " + g["not_available"].get<std::string>());
    throw Error(
        "the base result has no gradient timeline (its `gradients` section): run it again with the "
        "gradients probe, e.g. `tbd run W --probes time,cpu,memory,gradients,roofline --out base.json`");
  }
  return g;
}

}  // namespace

double aligned_straggle(const std::vector<std::vector<double>>& copies) {
  if (copies.size() < 2) return 0;
  size_t n = copies.front().size();
  for (const auto& c : copies) n = std::min(n, c.size());
  if (n == 0) return 0;
  double excess = 0;
  for (size_t k = 0; k < n; ++k) {
    double slowest = 0, mean = 0;
    for (const auto& c : copies) slowest = std::max(slowest, c[k]), mean += c[k] / static_cast<double>(copies.size());
    excess += slowest - mean;
  }
  return excess / static_cast<double>(n);
}

double ring_allreduce_seconds(double bytes, int ranks, double bus_bytes_per_s, double latency_s) {
  if (ranks <= 1) return 0;
  return latency_s + 2.0 * (ranks - 1) / ranks * bytes / bus_bytes_per_s;
}

std::vector<SparseGradient> sparse_gradients_of(const nlohmann::json& base) {
  const nlohmann::json g = gradients_of(base);
  std::vector<SparseGradient> sparse;
  if (!sparse_apart(base)) return sparse;
  for (size_t k = 0; k < g.at("elements").size(); ++k) {
    if (!is_sparse(g, k)) continue;
    const int64_t rows = std::max<int64_t>(1, g["sparse"][k].at("rows").get<int64_t>());
    sparse.push_back({.rows = rows,
                      .entries = g["sparse"][k].at("entries").get<double>(),
                      .row_elements = g["elements"][k].get<int64_t>() / rows,
                      .element_size = g["element_size"][k].get<int64_t>()});
  }
  return sparse;
}

double ring_sparse_allreduce_seconds(const std::vector<SparseGradient>& sparse, int ranks, double bus_bytes_per_s,
                                     double latency_s) {
  if (ranks <= 1 || sparse.empty()) return 0;
  // The reducer stacks tables of one row shape into one collective.
  std::set<std::pair<int64_t, int64_t>> collectives;
  double bytes_per_rank = 0;
  for (const auto& s : sparse) {
    collectives.insert({s.row_elements, s.element_size});
    bytes_per_rank += s.entries * (8.0 + static_cast<double>(s.row_elements * s.element_size));
  }
  return 3 * latency_s * static_cast<double>(collectives.size()) + (ranks - 1) * bytes_per_rank / bus_bytes_per_s;
}

std::vector<double> bucket_bytes_of(const nlohmann::json& base, double bucket_mb) {
  const auto shapes = gradient_shapes(base, gradients_of(base));
  std::vector<double> sizes;
  for (const auto& members : assign_gradient_buckets(shapes, static_cast<int64_t>(bucket_mb * 1024 * 1024))) {
    double bytes = 0;
    for (size_t k : members) bytes += static_cast<double>(shapes[k].elements * shapes[k].element_size);
    sizes.push_back(bytes);
  }
  return sizes;
}

nlohmann::json replayable_phases(const nlohmann::json& base) {
  const auto dist = base.value("distributed", nlohmann::json());
  if (dist.is_object() && dist.value("world_size", 1) > 1)
    throw UsageError("the base result is itself a " + std::to_string(dist["world_size"].get<int>()) +
                     "-rank run: predict from a single-process result (tbd run without --nproc)");
  // The replay sends every backward pass's buckets; under --grad-accum only
  // the last micro-batch's pass does, which the model does not tell apart yet.
  if (const auto accum = base.at("workload").at("options").value("grad_accum", int64_t{1}); accum > 1)
    throw UsageError("the base result ran --grad-accum " + std::to_string(accum) +
                     ": the data-parallel prediction would all-reduce after each of its micro-batches, not once per "
                     "step; predict from a run without --grad-accum");
  const auto phases = base.value("phases", nlohmann::json());
  if (!phases.is_object() || !phases.contains("iteration_ms"))
    throw Error("the base result has no phase times (" +
                (phases.is_object() ? phases.value("not_available", std::string("phases missing"))
                                    : std::string("an older result")) +
                "): the prediction replays them; run the base on the CPU with this tbd");
  gradients_of(base);  // throws, naming the command, without a gradient timeline
  return phases;
}

StepSchedule step_schedule(const nlohmann::json& base, const nlohmann::json& phases, double bucket_mb, bool overlap) {
  const nlohmann::json g = gradients_of(base);
  const auto shapes = gradient_shapes(base, g);
  const auto buckets = assign_gradient_buckets(shapes, static_cast<int64_t>(bucket_mb * 1024 * 1024));
  const double backward = number(phases, "backward_ms") / 1e3;
  StepSchedule schedule;
  schedule.before_s = (number(phases, "data_ms") + number(phases, "forward_ms")) / 1e3;
  schedule.after_s = (number(phases, "optimizer_ms") + number(phases, "other_ms")) / 1e3;
  for (const auto& pass : g["backward_passes"]) {
    ScheduledPass p;
    p.backward_s = backward * pass.value("share_of_backward", 1.0);
    const auto& ready = pass.at("ready_fraction");
    for (const auto& members : buckets) {
      ScheduledBucket b;
      for (size_t k : members) {
        b.bytes += static_cast<double>(shapes[k].elements * shapes[k].element_size);
        // No gradient in this pass: the reducer fills the slot when backward ends.
        const double at = overlap && ready[k].is_number() ? ready[k].get<double>() * p.backward_s : p.backward_s;
        b.ready_s = std::max(b.ready_s, at);
      }
      p.buckets.push_back(b);
    }
    for (size_t k = 0; k < shapes.size(); ++k) p.sparse |= shapes[k].sparse && ready[k].is_number();
    schedule.passes.push_back(std::move(p));
  }
  return schedule;
}

namespace {

// The replay of the replicated run's buckets (all-reduces on the backward
// timeline) or the sharded step's program.
struct Communication {
  double exposed = 0, busy = 0, copies = 0;
  nlohmann::json detail;  // per backward pass (replicated) or per collective kind (sharded)
};

Communication replay_buckets(const StepSchedule& schedule, const DataParallelPlan& plan) {
  Communication c;
  c.detail = nlohmann::json::array();
  for (const auto& pass : schedule.passes) {
    const double length = pass.backward_s;
    double channel_free = 0, last_end = 0, last_start = 0;
    nlohmann::json timeline = nlohmann::json::array();
    for (const auto& bucket : pass.buckets) {
      const double start = std::max(bucket.ready_s, channel_free);
      const double seconds = plan.allreduce_seconds(bucket.bytes);
      channel_free = last_end = start + seconds;
      last_start = start;
      c.busy += seconds;
      // Into the bucket during backward, then averaged and copied back: three read+write passes.
      if (plan.copy_bytes_per_s > 0) c.copies += 6 * bucket.bytes / plan.copy_bytes_per_s;
      timeline.push_back({{"bytes", bucket.bytes},
                          {"ready_ms", 1e3 * bucket.ready_s},
                          {"start_ms", 1e3 * start},
                          {"end_ms", 1e3 * (start + seconds)}});
    }
    // The sparse gradients go when backward ends, beside the last bucket's
    // all-reduce (on Gloo's threads), or when that bucket starts, if later.
    if (pass.sparse && plan.sparse_allreduce_seconds > 0) {
      const double start = std::max(length, last_start);
      const double end = start + plan.sparse_allreduce_seconds;
      c.busy += std::max(0.0, end - std::max(start, channel_free));  // in flight beside the buckets: counted once
      last_end = std::max(channel_free, end);
      timeline.push_back({{"sparse", true}, {"start_ms", 1e3 * start}, {"end_ms", 1e3 * end}});
    }
    c.exposed += std::max(0.0, last_end - length);
    c.detail.push_back({{"backward_ms", 1e3 * length}, {"buckets", timeline}});
  }
  return c;
}

Communication replay_sharded(const nlohmann::json& base, const nlohmann::json& rank, const DataParallelPlan& plan) {
  const ShardedStep step = sharded_step(
      base, rank,
      {.ranks = plan.ranks, .sharding = plan.sharding, .bucket_mb = plan.bucket_mb, .overlap = plan.overlap});
  const StepReplay replay = replay_step(step, plan.collective_seconds);
  Communication c{.exposed = replay.exposed_s, .busy = replay.busy_s};
  if (plan.copy_bytes_per_s > 0) c.copies = step.copied_bytes / plan.copy_bytes_per_s;
  c.detail = nlohmann::json::object();
  for (size_t i = 0; i < step.collectives.size(); ++i) {
    auto& kind = c.detail[to_string(step.collectives[i].kind)];
    if (kind.is_null()) kind = {{"per_iteration", 0}, {"bytes_per_iteration", 0.0}, {"busy_ms", 0.0}};
    kind["per_iteration"] = kind["per_iteration"].get<int>() + 1;
    kind["bytes_per_iteration"] = kind["bytes_per_iteration"].get<double>() + step.collectives[i].bytes;
    kind["busy_ms"] = kind["busy_ms"].get<double>() + 1e3 * replay.seconds[i];
  }
  return c;
}

}  // namespace

nlohmann::json predict_data_parallel(const nlohmann::json& base, const DataParallelPlan& plan) {
  if (plan.ranks < 1) throw UsageError("the number of ranks to predict must be at least 1");
  const nlohmann::json phases = replayable_phases(base);
  const nlohmann::json& rank = plan.rank_phases.is_object() ? plan.rank_phases : phases;
  const bool sharded = plan.sharding != Sharding::none;
  const double forward = number(rank, "forward_ms") / 1e3, backward = number(rank, "backward_ms") / 1e3;
  // A sharded rank's optimizer steps its shard: 1/N of the elements.
  const double optimizer = number(rank, "optimizer_ms") / 1e3 / (sharded ? plan.ranks : 1);
  const double data = number(rank, "data_ms") / 1e3, other = number(rank, "other_ms") / 1e3;
  const double straggle = plan.straggle_s;
  const Communication replayed = sharded
                                     ? replay_sharded(base, rank, plan)
                                     : replay_buckets(step_schedule(base, rank, plan.bucket_mb, plan.overlap), plan);
  const double exposed = replayed.exposed, busy = replayed.busy, copies = replayed.copies;
  // Measured in context, the communication's cost on this host replaces the
  // replay's exposure (which assumes the computation runs undisturbed).
  const double communication = plan.communication_in_context_s.value_or(exposed);
  const double lookups = plan.embedding_placement_s;
  const double iteration = data + forward + backward + communication + lookups + copies + optimizer + other + straggle;
  const double base_iteration = number(phases, "iteration_ms") / 1e3;
  const double base_rate = base.at("throughput").at("samples_per_s").get<double>();
  const double per_rank = base_rate * base_iteration / iteration;

  nlohmann::json out = {{"kind", "data_parallel"},
                        {"ranks", plan.ranks},
                        {"sharding", to_string(plan.sharding)},
                        {"embedding_sharding", to_string(plan.embedding_sharding)},
                        {"overlap", plan.overlap},
                        {"bucket_mb", plan.bucket_mb},
                        {"allreduce", plan.allreduce_source},
                        {"rank_phases", plan.rank_phases_source},
                        {"iteration_ms",
                         {{"data", 1e3 * data},
                          {"forward", 1e3 * forward},
                          {"backward", 1e3 * backward},
                          {"communication_exposed", 1e3 * communication},
                          {"embedding_placement", 1e3 * lookups},
                          {"bucket_copies", 1e3 * copies},
                          {"optimizer", 1e3 * optimizer},
                          {"other", 1e3 * other},
                          {"straggler", 1e3 * straggle},
                          {"total", 1e3 * iteration}}},
                        {"communication_source", plan.communication_in_context_s ? "measured in context"
                                                 : sharded                       ? "replayed (collectives timed alone)"
                                                                                 : "replayed (buckets timed alone)"},
                        {"replayed_exposed_ms", 1e3 * exposed},
                        {"allreduce_busy_ms", 1e3 * busy},
                        {"sparse_allreduce_ms", 1e3 * plan.sparse_allreduce_seconds},
                        {"embedding_placement_source", plan.embedding_placement_source},
                        {"embedding_all_to_all_bytes", plan.embedding_exchange_bytes},
                        {"hidden_share", busy > 0 ? std::clamp(1 - exposed / busy, 0.0, 1.0) : 0.0},
                        {sharded ? "collectives" : "backward_passes", replayed.detail},
                        {"base_samples_per_s", base_rate},
                        {"per_rank_samples_per_s", per_rank},
                        {"global_samples_per_s", per_rank * plan.ranks},
                        {"speedup", per_rank * plan.ranks / base_rate},
                        {"efficiency", per_rank / base_rate},
                        {"unit", base["throughput"].value("unit", std::string("samples/s"))}};
  return out;
}

}  // namespace tbd
