#include "tbd/study/shapes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <regex>

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/utc_time.h"
#include "tbd/core/workload.h"
#include "tbd/measure/runner.h"
#include "tbd/report/result_set.h"
#include "tbd/report/shapes_document.h"
#include "tbd/study/channel_curve.h"

namespace tbd {

namespace {

// The layers that share one geometry: the sweep times them once.
struct Shape {
  LayerGeometry geometry;
  std::vector<std::string> modules;
  double calls_per_iteration = 0;
  double in_model_s = 0;        // per iteration, all its modules
  std::optional<double> share;  // of the instrumented iteration; none on CUDA
  std::vector<int64_t> counts;
};

nlohmann::json summary_json(const Summary& s) {
  return {{"mean_s", s.mean}, {"ci95_mean_s", {s.ci95_low, s.ci95_high}}, {"cv", s.cv}, {"n", s.n}};
}

CurvePoint point(int64_t channels, const Summary& time) { return {channels, time.mean, time.ci95_low, time.ci95_high}; }

nlohmann::json cliffs_json(const std::vector<Cliff>& cliffs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cliffs)
    out.push_back({{"channels", c.channels}, {"faster_channels", c.faster_channels}, {"ratio", c.ratio}});
  return out;
}

nlohmann::json choice_json(const std::optional<CurvePoint>& p) {
  if (!p) return nullptr;
  return {{"channels", p->channels}, {"training_s", p->mean}};
}

// The run that finds the layers: short, since it gives shapes, shares and a
// step time with its interval, not the workload's headline throughput.
RunOptions model_run_options(RunOptions o) {
  o.warmup = 2;
  o.warmup_auto = false;
  o.repeat = 3;
  o.iters = 2;
  o.min_time = 0;
  o.instrument_iters = 1;
  o.out.clear();
  o.json = false;
  o.quiet = true;
  return o;
}

std::regex layers_pattern(const std::string& layers) {
  try {
    return std::regex(layers.empty() ? std::string(".*") : layers);
  } catch (const std::regex_error& e) {
    throw UsageError("--layers '" + layers + "' is not a regular expression (" + e.what() +
                     "); give an ECMAScript pattern over module paths, e.g. --layers 'layer3\\..*conv'");
  }
}

// The layers --layers chooses, grouped by geometry, with their counts; the
// ones that cannot be swept go to `not_swept` with the reason.
std::vector<Shape> choose_shapes(const nlohmann::json& layers, const ShapesRequest& request,
                                 const std::string& workload, nlohmann::json& not_swept) {
  const std::regex pattern = layers_pattern(request.layers);
  std::vector<Shape> shapes;
  std::map<std::string, size_t> shape_of;
  std::vector<std::string> all_modules;
  for (const auto& l : layers) {
    const std::string module = l.at("module").get<std::string>();
    all_modules.push_back(module);
    if (!std::regex_search(module, pattern)) continue;
    const LayerGeometry g = layer_geometry_from_json(l.at("geometry"));
    if (const auto why = g.unsweepable_reason(); !why.empty()) {
      not_swept.push_back({{"module", module}, {"reason", why}});
      continue;
    }
    const auto [it, fresh] = shape_of.emplace(g.key(), shapes.size());
    if (fresh) {
      Shape shape;
      shape.geometry = g;
      shape.counts = channel_counts(request.channels, g.out_channels());
      shapes.push_back(std::move(shape));
    }
    Shape& s = shapes[it->second];
    if (std::find(s.modules.begin(), s.modules.end(), module) == s.modules.end()) s.modules.push_back(module);
    s.calls_per_iteration += l.at("calls_per_iteration").get<double>();
    s.in_model_s += l.at("forward_s").get<double>() + l.at("backward_s").get<double>();
    if (l.at("share_of_iteration").is_number())
      s.share = s.share.value_or(0) + l.at("share_of_iteration").get<double>();
  }
  if (shapes.empty() && not_swept.empty()) {
    std::string names;
    for (size_t i = 0; i < all_modules.size() && i < 8; ++i) names += (i ? ", " : "") + all_modules[i];
    throw UsageError("--layers '" + request.layers + "' matches none of " + workload + "'s " +
                     std::to_string(all_modules.size()) + " layers (" + names +
                     (all_modules.size() > 8 ? ", ..." : "") + ")");
  }
  return shapes;
}

// One shape's entry of the document: its curve, cliffs, front and the
// choices at the ratio; adds the layer's change under each pruning.
nlohmann::json analyse_shape(const Shape& s, const std::vector<ChannelTime>& times, double step_s, double ratio,
                             std::vector<LayerChange>& naive, std::vector<LayerChange>& aware) {
  std::vector<CurvePoint> curve, forward_curve;
  nlohmann::json points = nlohmann::json::array();
  for (const auto& t : times) {
    curve.push_back(point(t.channels, t.training));
    forward_curve.push_back(point(t.channels, t.forward));
    points.push_back(
        {{"channels", t.channels}, {"forward", summary_json(t.forward)}, {"training", summary_json(t.training)}});
  }
  const int64_t original = s.geometry.out_channels();
  const double at_original = largest_at_most(curve, original)->mean;  // the counts always hold the original
  // The share of the step: the layers probe's in-model time where host time
  // is the computation (CPU); else the sweep's own time at the original count.
  const double share = s.share ? *s.share : s.calls_per_iteration * at_original / step_s;
  const auto bound = static_cast<int64_t>(std::floor(ratio * static_cast<double>(original)));
  const auto naive_choice = largest_at_most(curve, bound);
  // No performance-aware count at or below the bound (every one is beaten by
  // a count above it): the aware pruning takes the naive count too, so both
  // prune every layer to the bound.
  auto aware_choice = best_at_most(curve, bound);
  if (!aware_choice) aware_choice = naive_choice;
  if (naive_choice) naive.push_back({share, naive_choice->mean / at_original});
  if (aware_choice) aware.push_back({share, aware_choice->mean / at_original});
  return {{"modules", s.modules},
          {"geometry", to_json(s.geometry)},
          {"original_channels", original},
          {"calls_per_iteration", s.calls_per_iteration},
          {"in_model_s", s.in_model_s},
          {"share_of_step", share},
          {"curve", points},
          {"cliffs", cliffs_json(find_cliffs(curve))},
          {"forward_cliffs", cliffs_json(find_cliffs(forward_curve))},
          {"front", performance_front(curve)},
          {"at_ratio", {{"bound", bound}, {"naive", choice_json(naive_choice)}, {"aware", choice_json(aware_choice)}}}};
}

}  // namespace

nlohmann::json run_shapes(const ShapesRequest& request, Workload& workload,
                          const std::function<void(const std::string&)>& progress) {
  (void)layers_pattern(request.layers);  // the options' form, before the run
  (void)channel_counts(request.channels, 4096);
  if (!(request.ratio > 0 && request.ratio <= 1))
    throw UsageError(
        fmt::format("--ratio {} must be above 0 and at most 1 (the share of channels kept)", request.ratio));

  const RunOutcome run = run_benchmark(model_run_options(request.options), workload, {"layers"});
  if (run.partial) throw Error("the workload's run was interrupted before its layers were recorded");
  const nlohmann::json& result = run.result;
  const nlohmann::json& layers = result.at("layers").at("layers");
  if (layers.empty())
    throw UsageError(workload.info().name +
                     " names no convolution or linear layer by its weights (Workload::named_weights), so tbd "
                     "shapes has nothing to sweep; resnet50, inception3, gpt, llama and the other one-model "
                     "workloads do");
  nlohmann::json not_swept = nlohmann::json::array();
  const std::vector<Shape> shapes = choose_shapes(layers, request, workload.info().name, not_swept);

  const nlohmann::json& summary = result.at("summary");
  const double step_s = summary.at("mean_s").get<double>();
  const c10::Device device(request.options.device);
  nlohmann::json entries = nlohmann::json::array();
  std::vector<LayerChange> naive, aware;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    if (progress)
      progress(fmt::format("{}/{} {} {} ({} counts)", i + 1, shapes.size(), s.modules.front(), s.geometry.describe(),
                           s.counts.size()));
    const auto times = sweep_layer(s.geometry, s.counts, device, request.timing, [] { return interrupt_requested(); });
    entries.push_back(analyse_shape(s, times, step_s, request.ratio, naive, aware));
  }

  const bool host_share = shapes.empty() || shapes.front().share.has_value();
  nlohmann::json doc = {
      {"schema", kShapesSchema},
      {"created_utc", utc_now()},
      {"workload", result.at("workload")},
      {"environment", result.at("environment")},
      {"step",
       {{"mean_s", step_s},
        {"ci95_mean_s", summary.at("ci95_mean_s")},
        {"n", summary.at("n")},
        {"definition",
         "iteration time of the workload's timed windows (3 repetitions of 2 iterations after 2 "
         "warm-up iterations), before the layers were swept"}}},
      {"sweep",
       {{"channels", request.channels},
        {"layers", request.layers.empty() ? nlohmann::json(nullptr) : nlohmann::json(request.layers)},
        {"warmup", request.timing.warmup},
        {"repeat", request.timing.repeat},
        {"calls", request.timing.calls}}},
      {"share_source",
       host_share ? "in-model host time of each layer's forward operator and its autograd nodes over one "
                    "instrumented iteration (the layers probe), divided by that iteration's time"
                  : "the sweep's training time at the original count times the calls per iteration, divided by "
                    "the step time (on CUDA an operator's host time is its launch)"},
      {"layers", entries},
      {"not_swept", not_swept},
      {"prediction",
       {{"ratio", request.ratio},
        {"definition",
         "Amdahl estimate: step x (1 - sum over layers of share x (1 - time at the chosen count / time at the "
         "original)); naive = each layer at the largest swept count <= ratio x original, aware = at the largest "
         "performance-aware count <= that (the naive count where none is); a layer with no swept count <= the "
         "bound stays as it is in both; the rest of the step and the layers reading a pruned layer's output "
         "taken as unchanged"},
        {"step_s", step_s},
        {"naive_step_s", amdahl_step(step_s, naive)},
        {"aware_step_s", amdahl_step(step_s, aware)}}}};
  return doc;
}

std::string shapes_table(const nlohmann::json& doc) {
  const ShapesDocument d = read_shapes_document(doc, "");
  std::string out = fmt::format(
      "{} layer shapes of {}, step {:.1f} ms; training time (forward + backward) per call against output channels\n",
      d.layers.size(), d.workload, 1e3 * d.step_s);
  out += fmt::format("  {:<24} {:<36} {:>6} {:>9} {:>6}  {}\n", "layer", "input", "C", "ms at C", "share",
                     "worst cliff; largest performance-aware counts");
  for (const auto& l : d.layers) {
    double at_original = 0;
    std::vector<std::string> aware;
    for (const auto& p : l.curve) {
      if (p.channels == l.original) at_original = p.mean_s;
      if (p.aware) aware.push_back(std::to_string(p.channels));
    }
    if (aware.size() > 5) aware.erase(aware.begin(), aware.end() - 5), aware.insert(aware.begin(), "...");
    out += fmt::format("  {:<24} {:<36} {:>6} {:>9.3f} {:>5.1f}%  {}; {}\n", l.name, l.input, l.original,
                       1e3 * at_original, 100 * l.share, l.worst_cliff, fmt::join(aware, " "));
  }
  for (const auto& n : doc["not_swept"])
    out += fmt::format("  {:<24} not swept: {}\n", n["module"].get<std::string>(), n["reason"].get<std::string>());
  out += fmt::format(
      "  pruned to {:.0f}% of each layer's channels (Amdahl estimate): naive {:.1f} ms, performance-aware {:.1f} ms "
      "(step now {:.1f} ms)\n",
      100 * d.ratio, 1e3 * d.naive_step_s, 1e3 * d.aware_step_s, 1e3 * d.step_s);
  return out;
}

}  // namespace tbd
