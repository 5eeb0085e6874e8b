// What disturbs timing on this machine, recorded in every result and turned
// into warnings that name the likely cause (docs/metrics.md#noise).
//
// A snapshot is taken as the timed windows begin and another as they end,
// both outside any timed iteration: load average, CPU time by state from
// /proc/stat (steal = time the hypervisor gave another guest), the CPU time
// of every other process (to name the ones that competed with the run),
// the frequency governor and clocks where cpufreq is readable, and whether
// the process was pinned to fewer CPUs than the machine has.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

struct ConditionSnapshot {
  double wall_s = 0;                                        // steady clock
  std::optional<double> load1;                              // /proc/loadavg, 1-minute average
  std::optional<int64_t> steal_ticks, total_ticks;          // /proc/stat "cpu" line
  std::map<int, std::pair<std::string, double>> processes;  // pid -> (name, CPU seconds) of other processes
  std::optional<double> clock_mhz;                          // scaling_cur_freq of cpu0, else /proc/cpuinfo
};

// Reads /proc under `proc_root` ("/proc" outside tests); `self` is excluded
// from the process list, and so are its children (data-parallel ranks).
ConditionSnapshot take_condition_snapshot(const std::string& proc_root = "/proc", int self = -1);

// The recorded section: both snapshots, the busy processes between them,
// governor and clocks, pinning.
nlohmann::json timing_conditions(const ConditionSnapshot& start, const ConditionSnapshot& end,
                                 const std::string& sys_cpu_root = "/sys/devices/system/cpu");

// What a result's figures say about noise, each warning naming the likely
// cause: dispersion across repetitions or iterations, a warm-up that ended at
// its cap, a loaded machine (load, steal, busy processes). Reads the result
// document's throughput, summary, warmup and timing_conditions sections.
std::vector<std::string> noise_warnings(const nlohmann::json& result);

// The thresholds noise_warnings() uses (docs/metrics.md#noise).
inline constexpr double kRepetitionCvWarning = 0.05;  // across repetition throughputs
inline constexpr double kIterationCvWarning = 0.10;   // across iteration times
inline constexpr double kBusyProcessShare = 0.10;     // of one core, over the windows
inline constexpr double kStealShareWarning = 0.02;    // of all CPU time

}  // namespace tbd
