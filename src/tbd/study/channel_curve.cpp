#include "tbd/study/channel_curve.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/study/comma_list.h"

namespace tbd {

namespace {

constexpr int64_t kMaxChannels = 65536;

const char* kChannelsHelp =
    "give auto, LO:HI:STEP (counts or percentages of the layer's original count, e.g. 50%:100%:8) or a "
    "comma list of counts (56,60,64)";

// A count, or a percentage of `original` rounded down, at least 1.
int64_t count_from(const std::string& text, int64_t original, const std::string& spec) {
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) {
    const auto p = real_from_text(text.substr(0, text.size() - 1));
    if (!p || !std::isfinite(*p) || *p <= 0)
      throw UsageError("--channels " + spec + ": '" + text + "' is not a positive percentage; " + kChannelsHelp);
    return std::max<int64_t>(1, static_cast<int64_t>(std::floor(*p / 100.0 * static_cast<double>(original))));
  }
  const auto n = integer_from_text(text);
  if (!n) throw UsageError("--channels " + spec + ": '" + text + "' is not a count; " + kChannelsHelp);
  return *n;
}

}  // namespace

std::vector<int64_t> channel_counts(const std::string& spec, int64_t original) {
  if (original < 1) throw Error("a layer with " + std::to_string(original) + " output channels cannot be swept");
  std::vector<int64_t> counts;
  if (spec == "auto") {
    for (int64_t c = (original / 2 + 7) / 8 * 8; c <= original; c += 8) counts.push_back(c);
    for (int64_t c = std::max<int64_t>(1, original - 7); c <= original; ++c) counts.push_back(c);
  } else if (std::count(spec.begin(), spec.end(), ':') == 2) {
    const auto a = spec.find(':'), b = spec.find(':', a + 1);
    const int64_t lo = count_from(spec.substr(0, a), original, spec);
    const int64_t hi = count_from(spec.substr(a + 1, b - a - 1), original, spec);
    const auto step = integer_from_text(spec.substr(b + 1));
    if (!step || *step < 1)
      throw UsageError("--channels " + spec + ": the step '" + spec.substr(b + 1) + "' is not a count of 1 or more");
    if (lo > hi)
      throw UsageError("--channels " + spec + ": LO is above HI for a layer of " + std::to_string(original) +
                       " channels; " + kChannelsHelp);
    if (lo < 1 || hi > std::min(16 * original, kMaxChannels))
      throw UsageError("--channels " + spec + ": counts must be between 1 and " +
                       std::to_string(std::min(16 * original, kMaxChannels)) + " for a layer of " +
                       std::to_string(original) + " channels");
    for (int64_t c = lo; c <= hi; c += *step) counts.push_back(c);
  } else {
    if (spec.find_first_not_of("0123456789%,. ") != std::string::npos)
      throw UsageError("--channels '" + spec + "': " + kChannelsHelp);
    const auto items = list_items(spec, "--channels", "56,60,64");
    for (const auto& item : items) counts.push_back(count_from(item, original, spec));
  }
  for (const int64_t c : counts)
    if (c < 1 || c > std::min(16 * original, kMaxChannels))
      throw UsageError("--channels " + spec + ": " + std::to_string(c) + " is outside 1.." +
                       std::to_string(std::min(16 * original, kMaxChannels)) + " for a layer of " +
                       std::to_string(original) + " channels");
  counts.push_back(original);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::vector<Cliff> find_cliffs(std::vector<CurvePoint> curve) {
  std::sort(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.channels < b.channels; });
  std::vector<Cliff> cliffs;
  for (size_t i = 0; i < curve.size(); ++i) {
    const CurvePoint* faster = nullptr;
    for (size_t j = i + 1; j < curve.size(); ++j)
      if (curve[i].ci_low > curve[j].ci_high && (!faster || curve[j].mean < faster->mean)) faster = &curve[j];
    if (faster && faster->mean > 0)
      cliffs.push_back({curve[i].channels, faster->channels, curve[i].mean / faster->mean});
  }
  return cliffs;
}

std::vector<int64_t> performance_front(std::vector<CurvePoint> curve) {
  std::sort(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.channels > b.channels; });
  std::vector<int64_t> front;
  double fastest_larger = std::numeric_limits<double>::infinity();
  for (const auto& p : curve) {
    if (p.mean < fastest_larger) front.push_back(p.channels);
    fastest_larger = std::min(fastest_larger, p.mean);
  }
  std::reverse(front.begin(), front.end());
  return front;
}

std::optional<CurvePoint> largest_at_most(const std::vector<CurvePoint>& curve, int64_t bound) {
  std::optional<CurvePoint> best;
  for (const auto& p : curve)
    if (p.channels <= bound && (!best || p.channels > best->channels)) best = p;
  return best;
}

std::optional<CurvePoint> best_at_most(const std::vector<CurvePoint>& curve, int64_t bound) {
  const auto front = performance_front(curve);
  std::optional<CurvePoint> best;
  for (const auto& p : curve)
    if (p.channels <= bound && std::find(front.begin(), front.end(), p.channels) != front.end() &&
        (!best || p.channels > best->channels))
      best = p;
  return best;
}

double amdahl_step(double step_s, const std::vector<LayerChange>& changes) {
  double saved = 0;
  for (const auto& c : changes) saved += c.share * (1 - c.time_ratio);
  return step_s * (1 - saved);
}

}  // namespace tbd
