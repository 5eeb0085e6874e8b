#include "tbd/measure/probes/ops_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "tbd/measure/ops/op_classes.h"

namespace tbd {

namespace {

using OpTimes = OpTally<OpStats>;

// One open op on this thread.
struct OpsFrame : OpFrame {
  double children = 0;  // the wall time of the ops it called
};
thread_local OpStack<OpsFrame> t_ops_open;

std::unique_ptr<at::ObserverContext> ops_on_start(const at::RecordFunction& fn, OpTimes* times) {
  return t_ops_open.open(OpStack<OpsFrame>::make(fn, times));
}

void ops_on_end(const at::RecordFunction& fn, at::ObserverContext* ctx, OpTimes* times) {
  const double end = steady_seconds();
  OpsFrame* f = t_ops_open.close(ctx);
  if (!f) return;
  const double total = end - f->start;
  if (OpsFrame* caller = t_ops_open.top()) caller->children += total;
  if (!times || !times->counting.load(std::memory_order_relaxed)) return;
  const char* name = fn.name();
  const std::string key = std::string(name) + "|" + op_class(name, f->optimizer);
  const double self = std::max(0.0, total - f->children);
  std::lock_guard<std::mutex> lock(times->mutex);
  OpStats& s = times->by_op[key];
  ++s.calls;
  s.total_s += total;
  s.self_s += self;
  OpStats& l = times->by_layer[layer_name(f->layer.layer) + (f->layer.backward ? "|backward" : "|forward")];
  ++l.calls;
  l.self_s += self;
}

// Self time per named layer, forward and backward apart, largest first; the
// operators outside every layer last.
nlohmann::json layer_table(const std::map<std::string, OpStats>& by_layer, double total_self) {
  struct Row {
    double forward = 0, backward = 0;
    int64_t calls = 0;
  };
  std::map<std::string, Row> layers;
  for (const auto& [key, s] : by_layer) {
    auto [layer, direction] = split_op_key(key);
    Row& r = layers[layer];
    (direction == "backward" ? r.backward : r.forward) += s.self_s;
    r.calls += s.calls;
  }
  std::vector<std::pair<std::string, Row>> rows(layers.begin(), layers.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if ((a.first == kNoLayer) != (b.first == kNoLayer)) return b.first == kNoLayer;
    return a.second.forward + a.second.backward > b.second.forward + b.second.backward;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [layer, r] : rows)
    out.push_back({{"layer", layer},
                   {"forward_self_s", r.forward},
                   {"backward_self_s", r.backward},
                   {"self_s", r.forward + r.backward},
                   {"share_of_self", total_self > 0 ? (r.forward + r.backward) / total_self : 0.0},
                   {"calls", r.calls}});
  return out;
}

}  // namespace

void OpsProbe::start() { observer_.start<ops_on_start, ops_on_end>({.layers = true}, "ops probe"); }

void OpsProbe::contribute(nlohmann::json& result) const {
  nlohmann::json o;
  o["unit"] = "s (self time summed over the instrumented iterations and every thread)";
  o["iterations"] = iterations_;
  o["instrumented_seconds"] = seconds_;
  if (iterations_ == 0) {
    o["not_available"] = "no instrumented iteration completed";
    result["ops"] = o;
    return;
  }
  const auto by_op = stats();
  std::vector<std::pair<std::string, OpStats>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.self_s > b.second.self_s; });
  double total_self = 0;
  for (const auto& [k, s] : rows) total_self += s.self_s;
  o["total_self_s"] = total_self;
  nlohmann::json ops = nlohmann::json::array();
  std::map<std::string, OpStats> classes;
  for (const auto& [key, s] : rows) {
    auto [op, cls] = split_op_key(key);
    ops.push_back({{"op", op},
                   {"class", cls},
                   {"calls", s.calls},
                   {"self_s", s.self_s},
                   {"total_s", s.total_s},
                   {"share_of_self", total_self > 0 ? s.self_s / total_self : 0.0},
                   {"calls_per_iteration", static_cast<double>(s.calls) / static_cast<double>(iterations_)}});
    classes[cls].calls += s.calls;
    classes[cls].self_s += s.self_s;
  }
  o["by_op"] = ops;
  nlohmann::json by_class = nlohmann::json::object();
  for (const auto& c : op_class_names()) {
    const OpStats s = classes.count(c) ? classes.at(c) : OpStats{};
    by_class[c] = {
        {"calls", s.calls}, {"self_s", s.self_s}, {"share_of_self", total_self > 0 ? s.self_s / total_self : 0.0}};
  }
  o["by_class"] = by_class;
  o["by_layer"] = layer_table(layer_stats(), total_self);
  result["ops"] = o;
}

std::vector<std::pair<std::string, std::string>> OpsProbe::summary_lines() const {
  const auto by_op = stats();
  if (iterations_ == 0 || by_op.empty()) return {{"top ops", "n/a (no op ran in an instrumented iteration)"}};
  std::vector<std::pair<std::string, OpStats>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.self_s > b.second.self_s; });
  double total = 0;
  std::map<std::string, double> classes;
  for (const auto& [k, s] : rows) total += s.self_s, classes[split_op_key(k).second] += s.self_s;
  std::vector<std::pair<std::string, std::string>> lines;
  std::vector<std::pair<double, std::string>> by_class;
  for (const auto& [c, t] : classes) by_class.push_back({t, c});
  std::sort(by_class.rbegin(), by_class.rend());
  std::string cls;
  for (const auto& [t, c] : by_class)
    if (t / total >= 0.005) cls += fmt::format("{}{} {:.1f}%", cls.empty() ? "" : ", ", c, 100 * t / total);
  lines.push_back({"op classes", cls + " (share of op self time)"});
  std::string layers;
  int shown = 0;
  for (const auto& l : layer_table(layer_stats(), total))
    if (shown < 6 && l["share_of_self"].get<double>() >= 0.005)
      layers += fmt::format("{}{} {:.1f}%", shown++ == 0 ? "" : ", ", l["layer"].get<std::string>(),
                            100 * l["share_of_self"].get<double>());
  if (!layers.empty()) lines.push_back({"layers", layers + " (largest first; share of op self time)"});
  const double n = static_cast<double>(iterations_);
  lines.push_back(
      {"top ops", fmt::format("{:<40} {:>13} {:>10} {:>7}  {}", "op", "self ms/iter", "calls/iter", "share", "class")});
  for (size_t i = 0; i < rows.size() && static_cast<int>(i) < top_n_; ++i) {
    auto [op, c] = split_op_key(rows[i].first);
    if (op.size() > 40) op = op.substr(0, 37) + "...";
    lines.push_back(
        {"", fmt::format("{:<40} {:>13.3f} {:>10.1f} {:>6.1f}%  {}", op, 1e3 * rows[i].second.self_s / n,
                         static_cast<double>(rows[i].second.calls) / n, 100 * rows[i].second.self_s / total, c)});
  }
  return lines;
}

}  // namespace tbd
