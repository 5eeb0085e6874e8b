#include "tbd/report/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "tbd/core/error.h"
#include "tbd/measure/statistics.h"

namespace tbd {
namespace {

struct Pooled {
  std::string label;
  std::vector<std::string> files;
  std::vector<double> times;
  std::vector<const nlohmann::json*> results;
};

std::map<std::string, Pooled> pool_by_configuration(const ResultSet& set) {
  std::map<std::string, Pooled> pooled;
  for (const auto& run : set.runs) {
    auto& p = pooled[configuration_key(run.result)];
    p.label = configuration_label(run.result);
    p.files.push_back(run.file + (run.origin.empty() ? "" : " (" + run.origin + ")"));
    for (double t : iteration_times(run.result)) p.times.push_back(t);
    p.results.push_back(&run.result);
  }
  return pooled;
}

std::string env_text(const nlohmann::json& r, const char* what) {
  if (!r.contains("environment")) return "unknown";
  const auto& e = r["environment"];
  const std::string w = what;
  if (w == "CPU") return e.contains("cpu") && e["cpu"].contains("model") ? e["cpu"]["model"].dump() : "unknown";
  if (w == "LibTorch version")
    return e.contains("libtorch") && e["libtorch"].contains("version") ? e["libtorch"]["version"].dump() : "unknown";
  if (w == "intra-op threads") return r["workload"]["options"].contains("threads") ? r["workload"]["options"]["threads"].dump() : "unknown";
  if (w == "host") return e.contains("os") && e["os"].contains("hostname") ? e["os"]["hostname"].dump() : "unknown";
  return "unknown";
}

// The smallest p-value the U test can give for these sample sizes (two
// samples that do not overlap at all).
double smallest_possible_p(size_t n1, size_t n2) {
  std::vector<double> a, b;
  for (size_t i = 0; i < n1; ++i) a.push_back(static_cast<double>(i));
  for (size_t i = 0; i < n2; ++i) b.push_back(static_cast<double>(n1 + i));
  return mann_whitney_u(a, b).p_value;
}

}  // namespace

bool Comparison::regression() const {
  for (const auto& r : runs)
    if (r.verdict == "slower") return true;
  return false;
}

Comparison compare_results(const ResultSet& base, const ResultSet& candidate, const CompareOptions& options,
                           const std::string& base_path, const std::string& new_path) {
  Comparison c;
  c.options = options;
  const auto b = pool_by_configuration(base), n = pool_by_configuration(candidate);
  std::set<std::string> warned;
  for (const auto& [key, pb] : b) {
    const auto it = n.find(key);
    if (it == n.end()) {
      c.only_in_base.push_back(pb.label);
      continue;
    }
    const Pooled& pn = it->second;
    ComparedRun row;
    row.label = pb.label;
    row.key = key;
    row.base_files = pb.files;
    row.new_files = pn.files;
    row.n_base = pb.times.size();
    row.n_new = pn.times.size();
    if (pb.times.empty() || pn.times.empty()) {
      row.verdict = "no significant change";
      row.note = "no measured iterations on one side";
      c.runs.push_back(row);
      continue;
    }
    row.median_base_s = percentile(pb.times, 0.5);
    row.median_new_s = percentile(pn.times, 0.5);
    row.ratio = ratio_of_medians(pb.times, pn.times, options.alpha);
    row.test = mann_whitney_u(pb.times, pn.times);
    const bool significant = row.test.p_value < options.alpha;
    if (significant && row.ratio.ratio > 1 + options.threshold)
      row.verdict = "slower";
    else if (significant && row.ratio.ratio < 1 - options.threshold)
      row.verdict = "faster";
    else
      row.verdict = "no significant change";
    if (!significant && smallest_possible_p(row.n_base, row.n_new) >= options.alpha)
      row.note = fmt::format("too few iterations ({} and {}) for the test to reach p < {}; run more (--iters)",
                             row.n_base, row.n_new, options.alpha);
    else if (significant && row.verdict == "no significant change")
      row.note = fmt::format("significant, but within the ±{:.0f}% threshold", 100 * options.threshold);
    for (const char* what : {"CPU", "intra-op threads", "LibTorch version", "host"}) {
      const std::string vb = env_text(*pb.results.front(), what), vn = env_text(*pn.results.front(), what);
      if (vb != vn && warned.insert(std::string(what) + vb + vn).second)
        c.warnings.push_back(fmt::format("{} differs: base {} vs new {} (first seen for {}); the difference may "
                                         "come from the machine, not the code", what, vb, vn, pb.label));
    }
    for (const auto* side : {&pb, &pn})
      for (size_t i = 0; i < side->results.size(); ++i)
        if (side->results[i]->value("partial", false))
          c.warnings.push_back(side->files[i] + " is a partial run (interrupted)");
    c.runs.push_back(row);
  }
  for (const auto& [key, pn] : n)
    if (!b.count(key)) c.only_in_new.push_back(pn.label);
  if (c.runs.empty()) {
    std::string have_b, have_n;
    for (const auto& [k, p] : b) have_b += "\n  base: " + p.label;
    for (const auto& [k, p] : n) have_n += "\n  new:  " + p.label;
    if (b.empty()) throw Error(base_path + ": no tbd results found to compare");
    if (n.empty()) throw Error(new_path + ": no tbd results found to compare");
    throw Error("nothing comparable: no configuration (workload, scale, batch size, precision, device, settings, "
                "world size) of " + base_path + " appears in " + new_path + ":" + have_b + have_n);
  }
  return c;
}

void print_comparison(std::ostream& out, const Comparison& c) {
  out << fmt::format("{:<34} {:>11} {:>11} {:>7} {:>17} {:>9} {:>7}  {}\n", "configuration", "base med", "new med",
                     "ratio", fmt::format("{:.0f}% CI", 100 * (1 - c.options.alpha)), "p (U)", "P(n>b)", "verdict");
  for (const auto& r : c.runs) {
    const std::string ci = r.ratio.has_interval ? fmt::format("[{:.3f}, {:.3f}]", r.ratio.low, r.ratio.high) : "n/a";
    out << fmt::format("{:<34} {:>9.4g}ms {:>9.4g}ms {:>7.3f} {:>17} {:>9.3g} {:>7.2f}  {}\n", r.label,
                       1e3 * r.median_base_s, 1e3 * r.median_new_s, r.ratio.ratio, ci, r.test.p_value,
                       r.test.probability_candidate_greater, r.verdict);
    if (!r.note.empty()) out << "    note: " << r.note << "\n";
  }
  out << fmt::format("ratio = median iteration time new / base (> 1: slower); verdict at threshold ±{:.0f}% and "
                     "alpha {} (two-sided Mann–Whitney U, normal approximation with tie and continuity "
                     "correction); P(n>b): probability that a new iteration is slower than a base one\n",
                     100 * c.options.threshold, c.options.alpha);
  for (const auto& l : c.only_in_base) out << "only in base (not compared): " << l << "\n";
  for (const auto& l : c.only_in_new) out << "only in new (not compared): " << l << "\n";
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : c.runs)
    runs.push_back({{"configuration", r.label},
                    {"key", r.key},
                    {"base_files", r.base_files},
                    {"new_files", r.new_files},
                    {"n_base", r.n_base},
                    {"n_new", r.n_new},
                    {"median_base_s", r.median_base_s},
                    {"median_new_s", r.median_new_s},
                    {"ratio", r.ratio.ratio},
                    {"ratio_ci", r.ratio.has_interval ? nlohmann::json{r.ratio.low, r.ratio.high} : nlohmann::json(nullptr)},
                    {"u_base", r.test.u_base},
                    {"u_new", r.test.u_candidate},
                    {"z", r.test.z},
                    {"p_value", r.test.p_value},
                    {"probability_new_slower", r.test.probability_candidate_greater},
                    {"rank_biserial", r.test.rank_biserial},
                    {"verdict", r.verdict},
                    {"note", r.note}});
  return {{"schema", "tbd.compare/1"},
          {"threshold", c.options.threshold},
          {"alpha", c.options.alpha},
          {"runs", runs},
          {"only_in_base", c.only_in_base},
          {"only_in_new", c.only_in_new},
          {"warnings", c.warnings},
          {"regression", c.regression()}};
}

}  // namespace tbd
