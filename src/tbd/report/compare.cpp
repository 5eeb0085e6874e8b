#include "tbd/report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tbd/core/error.h"
#include "tbd/report/json_fields.h"

namespace tbd {
namespace {

// The runs of one configuration on one side: each result file is a process.
struct Group {
  std::string label, unit;
  std::vector<std::string> files;
  RepetitionTimes processes;
  std::vector<const nlohmann::json*> results;
};

std::map<std::string, Group> group_by_configuration(const ResultSet& set) {
  std::map<std::string, Group> groups;
  for (const auto& run : set.runs) {
    auto& g = groups[configuration_key(run.result)];
    g.label = configuration_label(run.result);
    g.unit = run.result["workload"].value("sample_unit", std::string("samples"));
    g.files.push_back(run.file + (run.origin.empty() ? "" : " (" + run.origin + ")"));
    g.processes.push_back(repetition_seconds_per_sample(run.result));
    g.results.push_back(&run.result);
  }
  return groups;
}

// An environment field as JSON text ("unknown" where not recorded).
std::string env_text(const nlohmann::json& r, const std::string& what) {
  const auto text = [&](fields::Path path) {
    const nlohmann::json* f = fields::find(r, path);
    return f ? f->dump() : std::string("unknown");
  };
  if (what == "CPU") return text({"environment", "cpu", "model"});
  if (what == "LibTorch version") return text({"environment", "libtorch", "version"});
  if (what == "intra-op threads") return text({"workload", "options", "threads"});
  if (what == "host") return text({"environment", "os", "hostname"});
  return "unknown";
}

// What differs between two configurations (--ab), option by option.
std::vector<std::string> differences(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<std::string> out;
  if (a["workload"]["name"] != b["workload"]["name"])
    out.push_back("workload " + a["workload"]["name"].dump() + " → " + b["workload"]["name"].dump());
  const auto& oa = a["workload"]["options"];
  const auto& ob = b["workload"]["options"];
  std::set<std::string> keys;
  for (const auto& [k, v] : oa.items()) keys.insert(k);
  for (const auto& [k, v] : ob.items()) keys.insert(k);
  for (const auto& k : keys) {
    if (k == "seed" || k == "workload") continue;
    const std::string va = oa.contains(k) ? oa[k].dump() : "unset", vb = ob.contains(k) ? ob[k].dump() : "unset";
    if (va != vb) out.push_back(k + " " + va + " → " + vb);
  }
  return out;
}

void warn_about_environments(Comparison& c, const Group& b, const Group& n, std::set<std::string>& warned) {
  for (const char* what : {"CPU", "intra-op threads", "LibTorch version", "host"}) {
    if (c.options.ab && std::string(what) == "intra-op threads") continue;  // listed as a difference
    const std::string vb = env_text(*b.results.front(), what), vn = env_text(*n.results.front(), what);
    if (vb != vn && warned.insert(std::string(what) + vb + vn).second)
      c.warnings.push_back(
          fmt::format("{} differs: base {} vs new {} (first seen for {}); the difference may "
                      "come from the machine, not the code",
                      what, vb, vn, b.label));
  }
  for (const auto* side : {&b, &n})
    for (size_t i = 0; i < side->results.size(); ++i)
      if (side->results[i]->value("partial", false))
        c.warnings.push_back(side->files[i] + " is a partial run (interrupted)");
}

ComparedRun judge(const Group& b, const Group& n, const CompareOptions& o) {
  ComparedRun row;
  row.label = b.label;
  row.base_files = b.files;
  row.new_files = n.files;
  row.unit = b.unit;
  row.stats = compare_hierarchical(b.processes, n.processes, o.alpha);
  const auto& s = row.stats;
  if (s.n_base == 0 || s.n_new == 0) {
    row.verdict = "inconclusive";
    row.note = "no timed repetition on one side";
    return row;
  }
  if (s.n_base < 2 || s.n_new < 2) {
    row.verdict = "inconclusive";
    row.needed = 3;
    row.needed_unit = s.unit;
    row.note = fmt::format(
        "{} and {} {}s: a verdict needs at least 2 a side (5 recommended) to know the "
        "run-to-run noise; rerun with --repeat 5 (the default) or give more result files",
        s.n_base, s.n_new, s.unit);
    return row;
  }
  const bool significant = s.p_value < o.alpha;
  if (significant && s.ratio > 1 + o.threshold) {
    row.verdict = "slower";
  } else if (significant && s.ratio < 1 - o.threshold) {
    row.verdict = "faster";
  } else if (s.low >= 1 - o.threshold && s.high <= 1 + o.threshold) {
    // The interval excludes any change beyond the threshold.
    row.verdict = "no significant change";
    if (significant) row.note = fmt::format("significant, but within the ±{:.0f}% threshold", 100 * o.threshold);
  } else {
    // Neither a change nor its absence is shown: the noise is too large
    // for this many units.
    row.verdict = "inconclusive";
    const std::string interval = fmt::format("the {:.0f}% CI [{:.3f}, {:.3f}] reaches beyond ±{:.0f}%",
                                             100 * (1 - o.alpha), s.low, s.high, 100 * o.threshold);
    // The interval must shrink to the room between the estimate and the
    // nearer side of the threshold (at least a quarter of the threshold, so
    // an estimate right at it still gets a finite answer), and it takes more
    // units than there are now.
    const double log_threshold = std::log1p(o.threshold);
    const double room = std::max(log_threshold - std::abs(std::log(s.ratio)), log_threshold / 4);
    const double target = std::expm1(room);
    const int64_t units_now = static_cast<int64_t>(std::min(s.n_base, s.n_new));
    if (s.unit == "process") {
      row.needed = std::max(units_needed(s.log_sd, target, o.alpha), units_now + 1);
      row.needed_unit = "process";
      row.note = fmt::format(
          "{}: with a process-to-process spread of {:.1f}% a verdict needs about {} result "
          "files a side",
          interval, 100 * s.log_sd, row.needed);
    } else if (const int64_t reps = repetitions_needed(s.log_sd, target, o.alpha); reps > 0) {
      row.needed = std::max(reps, units_now + 1);
      row.needed_unit = "repetition";
      row.note = fmt::format(
          "{}: with a repetition-to-repetition spread of {:.1f}% a verdict needs about {} "
          "repetitions a side (--repeat {})",
          interval, 100 * s.log_sd, row.needed, row.needed);
    } else {
      row.needed = std::max<int64_t>(processes_needed(s, target, o.alpha), 2);
      row.needed_unit = "process";
      row.note = fmt::format(
          "{}: with a repetition-to-repetition spread of {:.1f}% (and as much assumed "
          "between processes, which one file a side cannot show) a verdict needs about {} "
          "result files a side (separate runs of each configuration)",
          interval, 100 * s.log_sd, row.needed);
    }
  }
  return row;
}

[[noreturn]] void nothing_comparable(const std::map<std::string, Group>& b, const std::map<std::string, Group>& n,
                                     const std::string& base_path, const std::string& new_path) {
  if (b.empty()) throw UsageError(base_path + ": no tbd results found to compare");
  if (n.empty()) throw UsageError(new_path + ": no tbd results found to compare");
  std::string have;
  for (const auto& [k, g] : b) have += "\n  base: " + g.label;
  for (const auto& [k, g] : n) have += "\n  new:  " + g.label;
  throw UsageError(
      "nothing comparable: no configuration (workload, scale, batch size, precision, device, "
      "settings, world size) of " +
      base_path + " appears in " + new_path + "; to compare two different configurations on purpose, add --ab:" + have);
}

// Configurations of one side by workload name, for --ab: a side may hold
// one configuration of each workload (a suite run with one option changed).
using KeyedGroup = std::pair<const std::string, Group>;

std::map<std::string, const KeyedGroup*> by_workload(const std::map<std::string, Group>& groups, const char* side,
                                                     const std::string& path) {
  std::map<std::string, std::vector<const KeyedGroup*>> all;
  for (const auto& entry : groups)
    all[entry.second.results.front()->at("workload").value("name", "?")].push_back(&entry);
  std::map<std::string, const KeyedGroup*> one;
  for (const auto& [workload, list] : all) {
    if (list.size() != 1) {
      std::string have;
      for (const auto* g : list) have += "\n  " + g->second.label;
      throw UsageError(std::string("--ab pairs one configuration of each workload with another, but the ") + side +
                       " side (" + path + ") holds " + std::to_string(list.size()) + " of " + workload + ":" + have +
                       "\ngive files or folders with one configuration per workload on each side");
    }
    one[workload] = list.front();
  }
  return one;
}

// --ab: a deliberate A/B. With one configuration a side, those two; else
// each workload's configuration with the same workload's on the other side
// (an ablation of one option over a suite), listing what differs.
Comparison compare_ab(const std::map<std::string, Group>& b, const std::map<std::string, Group>& n,
                      const CompareOptions& options, const std::string& base_path, const std::string& new_path) {
  Comparison c;
  c.options = options;
  if (b.empty() || n.empty()) nothing_comparable(b, n, base_path, new_path);
  std::set<std::string> warned;
  const auto pair = [&](const std::string& kb, const Group& gb, const std::string& kn, const Group& gn) {
    ComparedRun row = judge(gb, gn, options);
    row.label = gb.label + "  vs  " + gn.label;
    row.key = kb + " | " + kn;
    row.differences = differences(*gb.results.front(), *gn.results.front());
    warn_about_environments(c, gb, gn, warned);
    c.runs.push_back(row);
  };
  if (b.size() == 1 && n.size() == 1) {
    pair(b.begin()->first, b.begin()->second, n.begin()->first, n.begin()->second);
    return c;
  }
  const auto wb = by_workload(b, "base", base_path), wn = by_workload(n, "new", new_path);
  for (const auto& [workload, gb] : wb) {
    const auto it = wn.find(workload);
    if (it == wn.end())
      c.only_in_base.push_back(gb->second.label);
    else
      pair(gb->first, gb->second, it->second->first, it->second->second);
  }
  for (const auto& [workload, gn] : wn)
    if (!wb.count(workload)) c.only_in_new.push_back(gn->second.label);
  if (c.runs.empty()) nothing_comparable(b, n, base_path, new_path);
  return c;
}

}  // namespace

std::vector<double> repetition_seconds_per_sample(const nlohmann::json& r) {
  std::vector<double> out;
  const auto add = [&](const nlohmann::json& part) {
    const double samples = fields::number(part, {"samples"}).value_or(0),
                 seconds = fields::number(part, {"seconds"}).value_or(0);
    if (samples > 0 && seconds > 0) out.push_back(seconds / samples);
  };
  if (const auto* repetitions = fields::find(r, {"throughput", "repetitions"});
      repetitions && repetitions->is_array()) {
    for (const auto& rep : *repetitions) add(rep);
    return out;
  }
  add(fields::object(r, {"throughput"}));  // results written before repetitions: the whole window
  return out;
}

bool Comparison::regression() const {
  for (const auto& r : runs)
    if (r.verdict == "slower") return true;
  return false;
}

Comparison compare_results(const ResultSet& base, const ResultSet& candidate, const CompareOptions& options,
                           const std::string& base_path, const std::string& new_path) {
  Comparison c;
  c.options = options;
  const auto b = group_by_configuration(base), n = group_by_configuration(candidate);
  std::set<std::string> warned;
  if (options.ab) return compare_ab(b, n, options, base_path, new_path);
  for (const auto& [key, gb] : b) {
    const auto it = n.find(key);
    if (it == n.end()) {
      c.only_in_base.push_back(gb.label);
      continue;
    }
    ComparedRun row = judge(gb, it->second, options);
    row.key = key;
    warn_about_environments(c, gb, it->second, warned);
    c.runs.push_back(row);
  }
  for (const auto& [key, gn] : n)
    if (!b.count(key)) c.only_in_new.push_back(gn.label);
  if (c.runs.empty()) nothing_comparable(b, n, base_path, new_path);
  return c;
}

void print_comparison(std::ostream& out, const Comparison& c) {
  out << fmt::format("{:<34} {:>12} {:>12} {:>7} {:>17} {:>8} {:>9}  {}\n", "configuration", "base /s", "new /s",
                     "ratio", fmt::format("{:.0f}% CI", 100 * (1 - c.options.alpha)), "p", "units", "verdict");
  for (const auto& r : c.runs) {
    const auto& s = r.stats;
    const std::string ci = s.has_interval ? fmt::format("[{:.3f}, {:.3f}]", s.low, s.high) : "n/a";
    const auto rate = [](double spp) { return spp > 0 ? fmt::format("{:.5g}", 1 / spp) : std::string("n/a"); };
    out << fmt::format("{:<34} {:>12} {:>12} {:>7.3f} {:>17} {:>8.3g} {:>9}  {}\n", r.label,
                       rate(s.base_seconds_per_sample), rate(s.new_seconds_per_sample), s.ratio, ci, s.p_value,
                       fmt::format("{}+{} {}", s.n_base, s.n_new, s.unit == "process" ? "proc" : "rep"), r.verdict);
    for (const auto& d : r.differences) out << "    A/B: " << d << "\n";
    if (!r.note.empty()) out << "    note: " << r.note << "\n";
  }
  out << fmt::format(
      "base/new: throughput ({} per second, geometric mean of the units); ratio = time per sample "
      "new / base (> 1: slower); units: repetitions (rep) or, with two or more result files a side, "
      "processes (proc); Welch's t test on log time per sample at alpha {}, with repetitions as units "
      "allowing as much variance again for the processes one file cannot show; verdict at "
      "±{:.0f}%\n",
      c.runs.empty() ? "samples" : c.runs.front().unit, c.options.alpha, 100 * c.options.threshold);
  for (const auto& l : c.only_in_base) out << "only in base (not compared): " << l << "\n";
  for (const auto& l : c.only_in_new) out << "only in new (not compared): " << l << "\n";
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : c.runs) {
    const auto& s = r.stats;
    runs.push_back({{"configuration", r.label},
                    {"key", r.key},
                    {"base_files", r.base_files},
                    {"new_files", r.new_files},
                    {"differences", r.differences},
                    {"unit", s.unit},
                    {"n_base", s.n_base},
                    {"n_new", s.n_new},
                    {"base_seconds_per_sample", s.base_seconds_per_sample},
                    {"new_seconds_per_sample", s.new_seconds_per_sample},
                    {"ratio", s.ratio},
                    {"ratio_ci", s.has_interval ? nlohmann::json{s.low, s.high} : nlohmann::json(nullptr)},
                    {"p_value", s.p_value},
                    {"df", s.df},
                    {"log_sd", s.log_sd},
                    {"verdict", r.verdict},
                    {"units_needed", r.needed > 0 ? nlohmann::json(r.needed) : nlohmann::json(nullptr)},
                    {"needed_unit", r.needed > 0 ? nlohmann::json(r.needed_unit) : nlohmann::json(nullptr)},
                    {"process_allowance", s.process_allowance()},
                    {"note", r.note}});
  }
  return {{"schema", "tbd.compare/2"},
          {"threshold", c.options.threshold},
          {"alpha", c.options.alpha},
          {"ab", c.options.ab},
          {"method",
           "Welch's t test on the log time per sample of repetitions (processes when both sides have "
           "two or more result files); ratio of geometric means with its t interval"},
          {"runs", runs},
          {"only_in_base", c.only_in_base},
          {"only_in_new", c.only_in_new},
          {"warnings", c.warnings},
          {"regression", c.regression()}};
}

}  // namespace tbd
