#include "tbd/predict/sharded_step.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <string>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/dist/shard_layout.h"
#include "tbd/predict/data_parallel_model.h"

namespace tbd {

namespace {

// At most this many reduce-scatters or after-step all-gathers in flight
// (ShardedDataParallel::kFlatsInFlight).
constexpr size_t kInFlight = 2;

double phase_s(const nlohmann::json& phases, const char* key) {
  return phases.contains(key) && phases[key].is_number() ? phases[key].get<double>() / 1e3 : 0.0;
}

// The workload's max_gradient_norm setting (settings are recorded as
// text); 0: it does not clip.
double max_gradient_norm(const nlohmann::json& base) {
  const auto& settings = base.at("workload").value("settings", nlohmann::json());
  if (!settings.is_object() || !settings.contains("max_gradient_norm")) return 0;
  const auto& v = settings["max_gradient_norm"];
  if (v.is_number()) return v.get<double>();
  return v.is_string() ? real_from_text(v.get<std::string>()).value_or(0.0) : 0.0;
}

// A bucket as the sharded reducer makes it: members (indices into the
// gradients section), its padded bytes, its unit (-1: whole parameters).
struct Bucket {
  std::vector<size_t> members;
  double bytes = 0;
  int unit = -1;
};

std::vector<GradientShape> shapes_of(const nlohmann::json& g) {
  std::vector<GradientShape> shapes;
  for (size_t k = 0; k < g.at("elements").size(); ++k)
    shapes.push_back({.elements = g["elements"][k].get<int64_t>(),
                      .element_size = g.at("element_size")[k].get<int64_t>(),
                      .kind = g.at("kind")[k].get<std::string>()});
  return shapes;
}

// The buckets for parameters `members`: by bytes, or one for a unit.
void add_buckets(std::vector<Bucket>& out, const std::vector<GradientShape>& shapes, const std::vector<size_t>& members,
                 int64_t bucket_bytes, int ranks, int unit) {
  if (members.empty()) return;
  std::vector<GradientShape> subset;
  for (size_t k : members) subset.push_back(shapes[k]);
  for (const auto& layout :
       shard_buckets(subset, unit < 0 ? bucket_bytes : std::numeric_limits<int64_t>::max(), ranks, 0)) {
    Bucket b{.unit = unit};
    for (size_t m : layout.members) b.members.push_back(members[m]);
    b.bytes = static_cast<double>(layout.padded * shapes[b.members.front()].element_size);
    out.push_back(std::move(b));
  }
}

// Each trainable parameter's unit (-1: the root), from the base.
std::vector<int> parameter_units(const nlohmann::json& base, size_t parameters) {
  const auto& units = base.value("model", nlohmann::json()).value("wrapping_units", nlohmann::json());
  const auto& of = units.is_object() ? units.value("parameter_units", nlohmann::json()) : nlohmann::json();
  if (!of.is_array() || of.size() != parameters)
    throw Error(
        "the base result does not record which wrapping unit each parameter belongs to "
        "(model.wrapping_units.parameter_units), which the replay of --sharding full needs: rerun the base with "
        "this tbd");
  // Units are numbered 0 .. count − 1 in forward order; -1 is the root.
  const auto count = units.value("count", nlohmann::json());
  for (const auto& u : of)
    if (!u.is_number_integer() || !count.is_number_integer() || u.get<long long>() < -1 ||
        u.get<long long>() >= count.get<long long>())
      throw Error("the base result's model.wrapping_units.parameter_units holds " + u.dump() +
                  ", not a unit number from -1 (outside every unit) to count − 1 (count: " + count.dump() +
                  "): the file was changed by hand or is damaged; rerun the base");
  return of.get<std::vector<int>>();
}

std::string base_option(const nlohmann::json& base, const char* key, const std::string& fallback) {
  const nlohmann::json options = base.contains("workload") && base["workload"].is_object()
                                     ? base["workload"].value("options", nlohmann::json())
                                     : nlohmann::json();
  return options.is_object() && options.contains(key) && options[key].is_string() ? options[key].get<std::string>()
                                                                                  : fallback;
}

}  // namespace

UnitGathers unit_gathers(const nlohmann::json& base) {
  const nlohmann::json& g = base.at("gradients");
  const auto shapes = shapes_of(g);
  const std::vector<int> unit_of = parameter_units(base, shapes.size());
  UnitGathers out;
  const std::string precision = base_option(base, "precision", "fp32");
  out.mixed_precision = precision == "bf16";
  const auto& units = base.at("model").at("wrapping_units");
  const auto& cast = units.value("parameter_cast_by_autocast", nlohmann::json());
  if (out.mixed_precision && (!cast.is_array() || cast.size() != shapes.size()))
    throw Error(
        "the base ran in bf16 and does not record which of its units' parameters autocast casts "
        "(model.wrapping_units.parameter_cast_by_autocast), which --sharding full gathers in bf16: rerun the base "
        "with this tbd");
  for (int u : unit_of) {
    if (u < 0) continue;
    out.bytes.resize(std::max(out.bytes.size(), static_cast<size_t>(u + 1)), 0.0);
    out.gradient_bytes.resize(out.bytes.size(), 0.0);
  }
  const bool copies_kept = base_option(base, "activation_checkpointing", "none") == "none";
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (unit_of[k] < 0) continue;
    const auto elements = static_cast<double>(shapes[k].elements);
    const auto size = static_cast<double>(shapes[k].element_size);
    const bool low = out.mixed_precision && cast[k].is_boolean() && cast[k].get<bool>() && size > 2;
    out.bytes[static_cast<size_t>(unit_of[k])] += elements * (low ? 2 : size);
    out.gradient_bytes[static_cast<size_t>(unit_of[k])] += elements * size;
    if (low && copies_kept) out.autocast_copies += 2 * elements;
  }
  return out;
}

namespace {

// Writes the program: computation advances a clock, launches and waits are
// placed at its current time.
class Program {
 public:
  void compute_until(double t) {
    if (t > now_) compute(t - now_);
  }
  void compute(double seconds) {
    if (seconds <= 0) return;
    step_.actions.push_back({.type = StepAction::Type::compute, .seconds = seconds});
    step_.compute_s += seconds;
    now_ += seconds;
  }
  size_t launch(CollectiveKind kind, double bytes) {
    step_.collectives.push_back({kind, bytes});
    const size_t i = step_.collectives.size() - 1;
    step_.actions.push_back({.type = StepAction::Type::launch, .collective = i});
    return i;
  }
  void wait(size_t i) { step_.actions.push_back({.type = StepAction::Type::wait, .collective = i}); }
  // A rate-limited launch: the oldest of `in_flight` awaited beyond kInFlight.
  void launch_limited(CollectiveKind kind, double bytes, std::deque<size_t>& in_flight) {
    in_flight.push_back(launch(kind, bytes));
    if (in_flight.size() > kInFlight) {
      wait(in_flight.front());
      in_flight.pop_front();
    }
  }
  void wait_all(std::deque<size_t>& in_flight) {
    for (size_t i : in_flight) wait(i);
    in_flight.clear();
  }
  double now() const { return now_; }
  void copy(double bytes) { step_.copied_bytes += bytes; }
  ShardedStep take() { return std::move(step_); }

 private:
  ShardedStep step_;
  double now_ = 0;
};

// One forward and one backward with the units' all-gathers (full): the
// backward laid out from the gradient timeline, the forward as its mirror.
struct UnitTimes {
  std::vector<double> begin, end;  // backward, seconds from its start, per unit
  double head = 0;                 // backward before the last unit in forward order begins
};

UnitTimes unit_times(const std::vector<Bucket>& buckets, size_t units, const std::vector<double>& ready_s,
                     double backward_s) {
  UnitTimes t;
  t.end.assign(units, 0);
  t.begin.assign(units, 0);
  for (const auto& b : buckets)
    if (b.unit >= 0)
      for (size_t k : b.members) t.end[b.unit] = std::max(t.end[b.unit], ready_s[k]);
  // A unit's backward begins when the unit after it ends; the last one's
  // after the root's gradients that come before it (the head's).
  const double last_end = units > 0 ? t.end[units - 1] : backward_s;
  for (const auto& b : buckets)
    if (b.unit < 0)
      for (size_t k : b.members)
        if (ready_s[k] <= last_end) t.head = std::max(t.head, ready_s[k]);
  for (size_t u = 0; u < units; ++u) t.begin[u] = u + 1 < units ? std::min(t.end[u], t.end[u + 1]) : t.head;
  return t;
}

}  // namespace

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all-reduce";
    case CollectiveKind::reduce_scatter: return "reduce-scatter";
    case CollectiveKind::all_gather: return "all-gather";
  }
  return "?";
}

ShardedStep sharded_step(const nlohmann::json& base, const nlohmann::json& phases, const ShardedStepPlan& plan) {
  if (plan.sharding == Sharding::none) throw UsageError("sharded_step: --sharding none all-reduces (step_schedule)");
  const nlohmann::json& g = base.at("gradients");
  const auto shapes = shapes_of(g);
  const int64_t bucket_bytes = static_cast<int64_t>(plan.bucket_mb * 1024 * 1024);
  const bool full = plan.sharding == Sharding::full;

  std::vector<Bucket> buckets;
  size_t units = 0;
  if (full) {
    const std::vector<int> unit_of = parameter_units(base, shapes.size());
    for (int u : unit_of) units = std::max(units, static_cast<size_t>(u + 1));
    std::vector<std::vector<size_t>> members(units);
    std::vector<size_t> root;
    for (size_t k = 0; k < unit_of.size(); ++k) (unit_of[k] < 0 ? root : members[unit_of[k]]).push_back(k);
    for (size_t u = 0; u < units; ++u)
      add_buckets(buckets, shapes, members[u], bucket_bytes, plan.ranks, static_cast<int>(u));
    add_buckets(buckets, shapes, root, bucket_bytes, plan.ranks, -1);
  } else {
    std::vector<size_t> all(shapes.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    add_buckets(buckets, shapes, all, bucket_bytes, plan.ranks, -1);
  }
  // A unit's all-gather: its parameters in the precision they are gathered in.
  std::vector<double> unit_bytes(units, 0);
  if (full) {
    const UnitGathers gathers = unit_gathers(base);
    for (size_t u = 0; u < std::min(units, gathers.bytes.size()); ++u) unit_bytes[u] = gathers.bytes[u];
  }

  const auto& passes = g.at("backward_passes");
  if (full && passes.size() != 1)
    throw Error("the base's step runs " + std::to_string(passes.size()) +
                " backward passes; the replay of --sharding full models one");
  const double forward = phase_s(phases, "forward_ms"), backward = phase_s(phases, "backward_ms");
  const CollectiveKind reduce =
      plan.sharding == Sharding::optimizer ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
  Program p;
  p.compute(phase_s(phases, "data_ms"));

  // Forward (full): the units' gathers, the backward's layout mirrored.
  std::vector<bool> gathering(units, false);
  std::vector<size_t> gather_of(units, 0);
  const auto gather = [&](size_t u) {
    if (!gathering[u]) gather_of[u] = p.launch(CollectiveKind::all_gather, unit_bytes[u]), gathering[u] = true;
  };
  const auto use = [&](size_t u) {  // awaited: u computes now
    gather(u);
    p.wait(gather_of[u]);
    gathering[u] = false;
  };
  for (const auto& pass : passes) {
    const double length = backward * pass.value("share_of_backward", 1.0);
    std::vector<double> ready(shapes.size(), length);
    const auto& fraction = pass.at("ready_fraction");
    for (size_t k = 0; k < shapes.size(); ++k)
      if (plan.overlap && fraction[k].is_number()) ready[k] = fraction[k].get<double>() * length;
    // The units' times come from the gradients' own readiness, with overlap or not.
    std::vector<double> ready_any(shapes.size(), length);
    for (size_t k = 0; k < shapes.size(); ++k)
      if (fraction[k].is_number()) ready_any[k] = fraction[k].get<double>() * length;
    const UnitTimes t = unit_times(buckets, units, ready_any, length);

    if (full) {
      const double scale = length > 0 ? forward / length : 0;
      const double forward_start = p.now();
      // The root's backward after the first unit mirrors to the forward's start.
      p.compute((length - (units > 0 ? t.end[0] : length)) * scale);
      for (size_t u = 0; u < units; ++u) {
        use(u);
        if (u + 1 < units) gather(u + 1);
        p.compute((t.end[u] - t.begin[u]) * scale);
      }
      p.compute_until(forward_start + forward);
    } else if (&pass == &passes.front()) {
      p.compute(forward);
    }

    // Backward: events in time order; a unit's gathers before it computes.
    struct Event {
      double at;
      int order;  // at one moment: a unit begins (0) before a bucket is launched (1)
      size_t index;
    };
    std::vector<Event> events;
    for (size_t u = 0; u < units; ++u) events.push_back({t.begin[u], 0, u});
    for (size_t b = 0; b < buckets.size(); ++b) {
      double at = 0;
      for (size_t k : buckets[b].members) at = std::max(at, ready[k]);
      events.push_back({at, 1, b});
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.at < b.at || (a.at == b.at && a.order < b.order); });
    const double backward_start = p.now();
    std::deque<size_t> reducing;
    std::vector<size_t> all_reduces;
    for (const auto& e : events) {
      p.compute_until(backward_start + e.at);
      if (e.order == 0) {
        use(e.index);
        if (e.index > 0) gather(e.index - 1);  // the unit backward reaches next
      } else if (reduce == CollectiveKind::all_reduce) {
        all_reduces.push_back(p.launch(reduce, buckets[e.index].bytes));
      } else {
        p.launch_limited(reduce, buckets[e.index].bytes, reducing);
      }
    }
    p.compute_until(backward_start + length);
    for (size_t i : all_reduces) p.wait(i);
    p.wait_all(reducing);
  }

  // Gradient clipping (the workload's max_gradient_norm) takes the norm over
  // every rank's shard: one all-reduce of a float, awaited. The optimizer
  // steps the shard, then the whole parameters' buckets are gathered back
  // (a unit's shard was updated in place).
  if (max_gradient_norm(base) > 0) p.wait(p.launch(CollectiveKind::all_reduce, sizeof(float)));
  p.compute(phase_s(phases, "optimizer_ms") / plan.ranks);
  std::deque<size_t> gathering_after;
  for (const auto& b : buckets) {
    p.copy(2 * b.bytes);  // the gradients into the bucket
    if (b.unit >= 0) continue;
    p.copy(2 * b.bytes);  // the gathered bucket into the parameters
    p.launch_limited(CollectiveKind::all_gather, b.bytes, gathering_after);
  }
  p.wait_all(gathering_after);
  p.compute(phase_s(phases, "other_ms"));
  return p.take();
}

StepReplay replay_step(const ShardedStep& step, const std::function<double(const StepCollective&)>& seconds) {
  StepReplay out;
  out.seconds.assign(step.collectives.size(), 0);
  std::vector<double> end(step.collectives.size(), 0);
  double clock = 0, channel_free = 0;
  for (const auto& a : step.actions) switch (a.type) {
      case StepAction::Type::compute: clock += a.seconds; break;
      case StepAction::Type::launch: {
        const double took = out.seconds[a.collective] = seconds(step.collectives[a.collective]);
        channel_free = end[a.collective] = std::max(clock, channel_free) + took;
        out.busy_s += took;
        break;
      }
      case StepAction::Type::wait: clock = std::max(clock, end[a.collective]); break;
    }
  out.exposed_s = std::max(0.0, clock - step.compute_s);
  return out;
}

double ring_collective_seconds(const StepCollective& c, int ranks, double bus_bytes_per_s, double latency_s) {
  if (c.kind == CollectiveKind::all_reduce) return ring_allreduce_seconds(c.bytes, ranks, bus_bytes_per_s, latency_s);
  if (ranks <= 1) return 0;
  return latency_s + (ranks - 1.0) / ranks * c.bytes / bus_bytes_per_s;
}

}  // namespace tbd
