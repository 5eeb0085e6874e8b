#include "tbd/measure/machine/timing_conditions.h"

#include <dirent.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tbd/core/statistics.h"

namespace tbd {
namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// /proc/PID/stat: "pid (comm) state ppid ... utime stime ..." (fields 14, 15);
// comm may hold spaces and parentheses, so fields are counted after the last ')'.
struct ProcStat {
  std::string name;
  int ppid = 0;
  double cpu_s = 0;
};
std::optional<ProcStat> read_proc_stat(const std::string& path) {
  const auto line = read_line(path);
  if (!line) return std::nullopt;
  const auto open = line->find('('), close = line->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcStat st;
  st.name = line->substr(open + 1, close - open - 1);
  std::istringstream rest(line->substr(close + 1));
  std::string state;
  long long ppid = 0, skip = 0, utime = 0, stime = 0;
  rest >> state >> ppid;
  for (int i = 0; i < 9; ++i) rest >> skip;  // fields 5..13
  rest >> utime >> stime;
  if (!rest) return std::nullopt;
  st.ppid = static_cast<int>(ppid);
  st.cpu_s = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return st;
}

std::optional<double> read_number(const std::string& path) {
  const auto line = read_line(path);
  if (!line) return std::nullopt;
  try {
    return std::stod(*line);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int online_cpus() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return online_cpus();
  return CPU_COUNT(&set);
}

nlohmann::json snapshot_json(const ConditionSnapshot& s) {
  nlohmann::json j;
  j["load1"] = s.load1 ? nlohmann::json(*s.load1) : nlohmann::json(nullptr);
  j["clock_mhz"] = s.clock_mhz ? nlohmann::json(*s.clock_mhz) : nlohmann::json(nullptr);
  return j;
}

const nlohmann::json* find(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

// What competed with the run: busy processes, steal, oversubscription.
std::vector<std::string> disturbances(const nlohmann::json& result) {
  std::vector<std::string> causes;
  const auto* tc = find(result, {"timing_conditions"});
  if (!tc) return causes;
  if (const auto* busy = find(*tc, {"busy_processes"}); busy && busy->is_array() && !busy->empty()) {
    std::vector<std::string> list;
    for (const auto& p : *busy)
      list.push_back(fmt::format("{} (pid {}) {:.0f}% of a core", p.value("name", std::string("?")), p.value("pid", 0),
                                 100 * p.value("cpu_share", 0.0)));
    causes.push_back(fmt::format("other processes used the CPU during the timed windows: {}", fmt::join(list, ", ")));
  }
  if (const auto* steal = find(*tc, {"steal_share"});
      steal && steal->is_number() && steal->get<double>() >= kStealShareWarning)
    causes.push_back(
        fmt::format("CPU steal {:.1f}% (the hypervisor ran other guests on these CPUs)", 100 * steal->get<double>()));
  const auto* load = find(*tc, {"end", "load1"});
  const auto* cpus = find(*tc, {"online_cpus"});
  if (load && load->is_number() && cpus && cpus->is_number() && load->get<double>() > cpus->get<double>() + 0.5)
    causes.push_back(fmt::format("the machine was oversubscribed (load average {:.2f} on {} CPUs)", load->get<double>(),
                                 cpus->get<int>()));
  return causes;
}

// The likeliest cause of dispersion, from what the conditions recorded.
std::string likely_cause(const nlohmann::json& result) {
  const auto* tc = find(result, {"timing_conditions"});
  if (!tc) return "no timing conditions were recorded";
  std::vector<std::string> causes = disturbances(result);
  if (const auto* gov = find(*tc, {"governor"}); gov && gov->is_string() && gov->get<std::string>() != "performance")
    causes.push_back("the frequency governor is '" + gov->get<std::string>() + "' (clocks may change mid-run)");
  if (causes.empty())
    return "no competing process, steal or oversubscription was seen, so the variation is the run's own "
           "(changing input shapes, allocator or cache effects, boost clocks): add --repeat or use --warmup auto";
  std::string text;
  for (const auto& c : causes) text += (text.empty() ? "" : "; ") + c;
  return "likely cause: " + text;
}

}  // namespace

ConditionSnapshot take_condition_snapshot(const std::string& proc_root, int self) {
  ConditionSnapshot s;
  s.wall_s = steady_now();
  if (self < 0) self = static_cast<int>(getpid());
  if (const auto line = read_line(proc_root + "/loadavg")) {
    try {
      s.load1 = std::stod(*line);
    } catch (const std::exception&) {
    }
  }
  if (const auto line = read_line(proc_root + "/stat"); line && line->rfind("cpu ", 0) == 0) {
    std::istringstream in(line->substr(4));
    int64_t v = 0, total = 0, steal = 0;
    for (int i = 0; i < 8 && in >> v; ++i) {  // user nice system idle iowait irq softirq steal
      total += v;
      if (i == 7) steal = v;
    }
    if (total > 0) s.total_ticks = total, s.steal_ticks = steal;
  }
  std::string self_name;
  int self_parent = -1;
  if (const auto me = read_proc_stat(proc_root + "/" + std::to_string(self) + "/stat"))
    self_name = me->name, self_parent = me->ppid;
  if (DIR* dir = opendir(proc_root.c_str())) {
    while (const dirent* e = readdir(dir)) {
      if (!std::all_of(e->d_name, e->d_name + std::strlen(e->d_name), ::isdigit)) continue;
      const int pid = std::atoi(e->d_name);
      if (pid == self) continue;
      const auto st = read_proc_stat(proc_root + "/" + e->d_name + "/stat");
      if (!st) continue;
      // Our own children, and the sibling ranks of a data-parallel run
      // (same launcher, same program), are the run, not competition.
      if (st->ppid == self || (st->ppid == self_parent && st->name == self_name && self_parent > 1)) continue;
      s.processes[pid] = {st->name, st->cpu_s};
    }
    closedir(dir);
  }
  if (const auto khz = read_number("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")) s.clock_mhz = *khz / 1e3;
  return s;
}

nlohmann::json timing_conditions(const ConditionSnapshot& start, const ConditionSnapshot& end,
                                 const std::string& sys_cpu_root) {
  nlohmann::json j;
  j["start"] = snapshot_json(start);
  j["end"] = snapshot_json(end);
  const double wall = end.wall_s - start.wall_s;
  j["window_s"] = wall;
  j["online_cpus"] = online_cpus();
  const int allowed = affinity_cpus();
  j["affinity_cpus"] = allowed;
  j["pinned"] = allowed < online_cpus();
  if (start.total_ticks && end.total_ticks && *end.total_ticks > *start.total_ticks)
    j["steal_share"] = static_cast<double>(*end.steal_ticks - *start.steal_ticks) /
                       static_cast<double>(*end.total_ticks - *start.total_ticks);
  else
    j["steal_share"] = nullptr;
  nlohmann::json busy = nlohmann::json::array();
  if (wall > 0) {
    std::vector<std::tuple<double, int, std::string>> rows;
    for (const auto& [pid, named] : end.processes) {
      const auto it = start.processes.find(pid);
      const double before = it != start.processes.end() ? it->second.second : 0.0;  // started during the run
      const double share = (named.second - before) / wall;
      if (share >= kBusyProcessShare) rows.emplace_back(share, pid, named.first);
    }
    std::sort(rows.rbegin(), rows.rend());
    for (size_t i = 0; i < rows.size() && i < 5; ++i)
      busy.push_back(
          {{"pid", std::get<1>(rows[i])}, {"name", std::get<2>(rows[i])}, {"cpu_share", std::get<0>(rows[i])}});
  }
  j["busy_processes"] = busy;
  const std::string cpufreq = sys_cpu_root + "/cpu0/cpufreq/";
  if (const auto gov = read_line(cpufreq + "scaling_governor")) {
    j["governor"] = *gov;
    const auto max_khz = read_number(cpufreq + "cpuinfo_max_freq");
    j["max_clock_mhz"] = max_khz ? nlohmann::json(*max_khz / 1e3) : nlohmann::json(nullptr);
  } else {
    j["governor"] = nullptr;
    j["max_clock_mhz"] = nullptr;
    j["clock_not_available"] = "cpufreq is not exposed here (usual in virtual machines and containers)";
  }
  j["definition"] =
      "snapshots as the timed windows begin and end: load1 from /proc/loadavg; steal_share = "
      "steal / all CPU ticks of /proc/stat between them; busy_processes: other processes that "
      "used at least 10% of a core meanwhile (share of one core); pinned: the affinity mask "
      "holds fewer CPUs than are online";
  return j;
}

std::vector<std::string> noise_warnings(const nlohmann::json& result) {
  std::vector<std::string> warnings;
  const std::string cause = likely_cause(result);
  const std::string unit = result.contains("throughput") ? result["throughput"].value("unit", std::string()) : "";
  // Across repetitions: the run-to-run dispersion a comparison must beat.
  if (const auto* reps = find(result, {"throughput", "repetitions"}); reps && reps->is_array() && reps->size() >= 2) {
    std::vector<double> rates;
    for (const auto& r : *reps)
      if (r.contains("samples_per_s") && r["samples_per_s"].is_number()) rates.push_back(r["samples_per_s"]);
    const double m = mean_of(rates);
    if (rates.size() >= 2 && m > 0 && stddev_of(rates) / m > kRepetitionCvWarning)
      warnings.push_back(
          fmt::format("throughput varied {:.0f}% (CV) across {} repetitions ({:.4g} to {:.4g} {}); "
                      "{}",
                      100 * stddev_of(rates) / m, rates.size(), *std::min_element(rates.begin(), rates.end()),
                      *std::max_element(rates.begin(), rates.end()), unit, cause));
  }
  // Across iterations: time per sample, so variable batch sizes do not count
  // as noise; not at all where batch shapes vary by design (sentence lengths
  // change the work per sample).
  const auto* variable = find(result, {"workload", "variable_shapes"});
  const bool shapes_vary = variable && variable->is_boolean() && variable->get<bool>();
  if (!shapes_vary && result.contains("iterations") && result["iterations"].is_array() &&
      result["iterations"].size() >= 3) {
    const auto seconds = result["iterations"].get<std::vector<double>>();
    std::vector<double> per_sample = seconds;
    if (result.contains("iteration_samples") && result["iteration_samples"].size() == seconds.size()) {
      const auto samples = result["iteration_samples"].get<std::vector<double>>();
      for (size_t i = 0; i < seconds.size(); ++i) per_sample[i] = samples[i] > 0 ? seconds[i] / samples[i] : 0;
    }
    const double m = mean_of(per_sample);
    if (m > 0 && stddev_of(per_sample) / m > kIterationCvWarning)
      warnings.push_back(fmt::format("time per sample varied {:.0f}% (CV) across {} iterations; {}",
                                     100 * stddev_of(per_sample) / m, per_sample.size(), cause));
  }
  // A shape first met in a timed window: on a GPU its time holds the shape's
  // one-off planning. Not said after --warmup 0 on one shape: a cold start asked for.
  const auto* warmed = find(result, {"warmup", "iterations"});
  if (const auto* first = find(result, {"batch_shapes", "timed_iterations_first_seen"});
      first && first->is_number_integer() && first->get<int64_t>() > 0 && warmed && warmed->is_number_integer() &&
      warmed->get<int64_t>() > 0) {
    const auto* declared = find(result, {"batch_shapes", "declared"});
    warnings.push_back(
        fmt::format("{} timed iteration(s) met a batch shape that warm-up had not run ({}); on a GPU their times hold "
                    "one-off planning for the new shape (cuDNN, cuBLAS): raise --warmup, or pad to coarser buckets "
                    "(--set length_bucket=N where the workload has it)",
                    first->get<int64_t>(),
                    declared && declared->is_number_integer()
                        ? fmt::format("the workload declares {} shapes; warm-up stops at 8 iterations per shape",
                                      declared->get<int64_t>())
                        : std::string("the workload does not declare its shapes")));
  }
  if (const auto* ended = find(result, {"warmup", "ended_by"}); ended && *ended == "cap")
    warnings.push_back(
        fmt::format("--warmup auto stopped at its cap of {} iterations before iteration times "
                    "settled, so the first timed iterations may still be warming up; {}",
                    result["warmup"].value("iterations", 0), cause));
  // A loaded machine is worth saying even when this run's figures look steady.
  if (warnings.empty()) {
    std::string text;
    for (const auto& c : disturbances(result)) text += (text.empty() ? "" : "; ") + c;
    if (!text.empty()) warnings.push_back("the machine was not quiet during the timed windows: " + text);
  }
  return warnings;
}

}  // namespace tbd
