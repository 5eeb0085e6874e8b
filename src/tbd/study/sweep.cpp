#include "tbd/study/sweep.h"
#include "tbd/core/number_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/number_format.h"
#include "tbd/measure/machine/environment.h"
#include "tbd/output/mllog.h"
#include "tbd/output/progress.h"
#include "tbd/output/result_file.h"
#include "tbd/report/result_set.h"
#include "tbd/study/comma_list.h"
#include "tbd/study/folder_lock.h"
#include "tbd/study/suite_presets.h"
#include "tbd/workloads/registry.h"

namespace tbd {
namespace fs = std::filesystem;

std::vector<long long> parse_batch_sizes(const std::string& text) {
  std::vector<long long> sizes;
  for (const auto& part : list_items(text, "--batch-sizes", "1,2,4,8")) {
    const auto b = integer_from_text(part);
    if (!b || *b < 1)
      throw UsageError("--batch-sizes takes 'auto' or a comma-separated list of sizes such as 1,2,4,8; got '" + text +
                       "'");
    sizes.push_back(*b);
  }
  return sizes;
}

BatchSchedule::BatchSchedule(SweepPlan plan) : plan_(std::move(plan)), next_(plan_.start) {
  if (plan_.start < 1 || plan_.max_batch < plan_.start)
    throw UsageError("--start must be at least 1 and --max-batch at least --start");
}

std::optional<long long> BatchSchedule::next() {
  if (stopped_) return std::nullopt;
  if (plan_.automatic) {
    if (next_ == 0 || next_ > plan_.max_batch) {
      stopped_by_ = "reached --max-batch " + std::to_string(plan_.max_batch);
      return std::nullopt;
    }
    last_ = next_;
  } else {
    if (index_ >= plan_.sizes.size()) return std::nullopt;
    last_ = plan_.sizes[index_];
  }
  ++index_;
  return last_;
}

bool BatchSchedule::record(const std::string& status, const ChildOutcome& run, bool interrupted) {
  if (interrupted || status == "partial") {
    stopped_ = true;
    stopped_by_ = run.interrupted() ? run.error : "interrupted";
    return false;
  }
  if (status == "out_of_memory") {
    stopped_ = out_of_memory_ = true;
    stopped_by_ = "out of memory at batch size " + std::to_string(last_);
    return false;
  }
  // Doubling past the largest representable size ends the plan as --max-batch does.
  next_ = last_ > plan_.max_batch / 2 ? 0 : last_ * 2;
  return true;
}

std::vector<nlohmann::json> BatchSchedule::skipped() const {
  std::vector<nlohmann::json> points;
  // A larger batch of a fixed list would not fit either.
  for (size_t k = index_; out_of_memory_ && !plan_.automatic && k < plan_.sizes.size(); ++k)
    points.push_back(
        {{"batch_size", plan_.sizes[k]}, {"status", "skipped"}, {"error", "a smaller batch size ran out of memory"}});
  return points;
}

int BatchSchedule::expected_points() const {
  // auto learns its length as it goes: the points so far, at least one.
  if (plan_.automatic) return std::max(1, static_cast<int>(index_));
  return static_cast<int>(plan_.sizes.size());
}

MemoryLimit sweep_memory_limit(bool automatic, long long given_bytes, bool on_cpu, long long host_bytes) {
  if (given_bytes > 0) return {given_bytes, "--memory-limit"};
  // Before the kernel's OOM killer would end more than the run. A list, or a
  // device with memory of its own, runs until a run fails.
  if (automatic && on_cpu) return {host_bytes * 3 / 4, "75% of this machine's memory"};
  return {};
}

std::vector<std::string> sweep_run_options(const PassedRunOptions& passed, const MemoryLimit& limit) {
  const auto& probes = passed.probes;
  // The limit is judged by the memory probe: make sure it runs.
  if (limit.bytes <= 0 || std::find(probes.begin(), probes.end(), "memory") != probes.end()) return passed.tokens;
  std::vector<std::string> with_memory = probes;
  with_memory.push_back("memory");
  return merge_options(passed.tokens, {"--probes", join_commas(with_memory)});
}

nlohmann::json sweep_point(long long batch_size, const ChildOutcome& run, const nlohmann::json& result,
                           const MemoryLimit& limit, const std::string& file, const std::string& log) {
  nlohmann::json point = {{"batch_size", batch_size}, {"log", log}, {"seconds", run.seconds}};
  if (result.is_null()) {
    point["status"] = run.out_of_memory() ? "out_of_memory" : run.killed() ? "killed" : "failed";
    point["error"] = run.error;
    return point;
  }
  const auto number_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const long long peak = peak_memory_bytes(result);
  point["peak_memory_bytes"] = peak >= 0 ? nlohmann::json(peak) : nlohmann::json(nullptr);
  point["samples_per_s"] = throughput_of(result);
  point["unit"] = throughput_unit(result);
  point["median_iteration_s"] = median_iteration_s(result);
  point["cpu_utilisation"] = number_or_null(cpu_utilisation(result));
  point["flops_utilisation"] = number_or_null(flops_utilisation(result));
  if (limit.bytes > 0 && peak > limit.bytes) {
    // Measured, but it would not fit: its figures stay in this point, its
    // result file goes (the caller's part), so reports and comparisons do
    // not take it for a fitting run.
    point["status"] = "out_of_memory";
    point["error"] =
        fmt::format("peak memory {} bytes exceeds the limit of {} bytes ({})", peak, limit.bytes, limit.source);
    return point;
  }
  point["status"] = result.value("partial", false) || run.interrupted() ? "partial" : "ok";
  if (run.interrupted()) point["error"] = run.error;
  point["file"] = file;
  return point;
}

long long largest_fitting_batch(const nlohmann::json& points) {
  long long largest = 0;
  for (const auto& p : points)
    if (p.value("status", "") == "ok") largest = std::max(largest, p["batch_size"].get<long long>());
  return largest;
}

std::string sweep_table(const nlohmann::json& sweep, const std::string& dir) {
  std::string text = fmt::format("{:>8} {:>16} {:>13} {:>8} {:>8} {:>12}  {}\n", "batch", "throughput", "iteration",
                                 "CPU", "FLOP%", "peak memory", "status");
  for (const auto& p : sweep.at("points")) {
    const auto num = [&](const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<double>() : NAN; };
    const std::string unit = p.value("unit", "");
    const double rate = num("samples_per_s"), cpu = num("cpu_utilisation"), peak = num("peak_memory_bytes");
    text += fmt::format(
        "{:>8} {:>16} {:>13} {:>8} {:>8} {:>12}  {}\n", p["batch_size"].get<long long>(),
        std::isfinite(rate) ? format_number(rate) + " " + unit : "-", format_ms(num("median_iteration_s")),
        std::isfinite(cpu) ? fmt::format("{:.0f}%", 100 * cpu) : "-", format_percent(num("flops_utilisation")),
        format_bytes(std::isfinite(peak) ? static_cast<long long>(peak) : -1),
        p["status"].get<std::string>() + (p.contains("error") ? " (" + p["error"].get<std::string>() + ")" : ""));
  }
  const std::string stopped_by = sweep.value("stopped_by", "");
  const nlohmann::json largest = sweep.value("largest_fitting_batch", nlohmann::json());
  if (largest.is_number())
    text += "largest batch size that fits: " + std::to_string(largest.get<long long>()) +
            (stopped_by.empty() ? "" : " (stopped: " + stopped_by + ")") + "\n";
  else
    text += "no batch size ran to completion" + (stopped_by.empty() ? "" : " (" + stopped_by + ")") + "\n";
  text += "results in " + dir + " (sweep.json; tbd report " + dir + ")\n";
  return text;
}

namespace {

long long host_memory_bytes() {
  const nlohmann::json env = capture_environment();
  if (env.contains("memory") && env["memory"].contains("total_bytes") && env["memory"]["total_bytes"].is_number())
    return env["memory"]["total_bytes"].get<long long>();
  return 0;
}

}  // namespace

StudyOutcome run_sweep(const SweepRequest& request, std::ostream& human) {
  const std::string& workload = request.workload;
  create_workload(workload);  // an unknown name fails now, listing the known ones
  BatchSchedule schedule(request.plan);
  const bool on_cpu = request.run.options.device == "cpu";
  const bool limit_from_host = request.plan.automatic && request.memory_limit_bytes == 0 && on_cpu;
  const MemoryLimit limit = sweep_memory_limit(request.plan.automatic, request.memory_limit_bytes, on_cpu,
                                               limit_from_host ? host_memory_bytes() : 0);
  const std::vector<std::string> run_options = sweep_run_options(request.run, limit);
  if (!request.mllog.empty()) check_log_path(request.mllog, "--mllog");
  if (!request.csv.empty()) check_log_path(request.csv, "--csv");
  check_distinct_outputs({{"--mllog", request.mllog}, {"--csv", request.csv}});  // every run appends to both
  const std::string dir = request.out.empty() ? "sweep-" + workload : request.out;
  check_results_folder(dir, "tbd sweep");
  create_results_folder(dir, "--out");
  create_results_folder((fs::path(dir) / "logs").string(), "--out");
  const FolderLock lock(dir, request.command);

  install_interrupt_handler();
  nlohmann::json points = nlohmann::json::array();
  const nlohmann::json environment = capture_environment();
  // The index as it stands: written after every point (as a suite's is), so a
  // sweep killed midway still indexes the results it left.
  const auto index = [&](const nlohmann::json& points_so_far) {
    const long long largest_fit = largest_fitting_batch(points_so_far);
    const nlohmann::json sweep = {
        {"schema", kSweepSchema},
        {"workload", workload},
        {"batch_sizes", request.plan.automatic ? nlohmann::json("auto") : nlohmann::json(request.plan.sizes)},
        {"memory_limit_bytes", limit.bytes > 0 ? nlohmann::json(limit.bytes) : nlohmann::json(nullptr)},
        {"memory_limit_source", limit.source},
        {"run_options", run_options},
        {"points", points_so_far},
        {"largest_fitting_batch", largest_fit > 0 ? nlohmann::json(largest_fit) : nlohmann::json(nullptr)},
        {"stopped_by", schedule.stopped_by()},
        {"environment", environment}};
    write_json_atomically((fs::path(dir) / "sweep.json").string(), sweep);
    return sweep;
  };
  StudyProgress progress("sweep " + workload, schedule.expected_points());
  while (const auto next = schedule.next()) {
    const long long b = *next;
    progress.set_total(schedule.expected_points());
    const std::string name = "bs-" + std::to_string(b);
    const std::string file = (fs::path(dir) / (name + ".json")).string();
    const std::string log = (fs::path(dir) / "logs" / (name + ".log")).string();
    std::vector<std::string> args = {request.program, "run", workload, "--batch-size", std::to_string(b)};
    args.insert(args.end(), run_options.begin(), run_options.end());
    args.insert(args.end(), {"--out", file, "--quiet"});
    if (!request.mllog.empty()) args.insert(args.end(), {"--mllog", request.mllog});
    if (!request.csv.empty()) args.insert(args.end(), {"--csv", request.csv});
    fs::remove(file);
    progress.begin("batch " + std::to_string(b));
    const ChildOutcome run = run_child(args, log);
    if (run.exit_code == 2) {  // refused what parsing could not see (a workload's --set key)
      progress.finish();
      throw UsageError("the runs of tbd sweep were refused: " + run.error);
    }
    nlohmann::json result;  // null: the run wrote no result to read
    if (run.ok() || (run.interrupted() && fs::exists(file))) {
      std::ifstream in(file);
      result = nlohmann::json::parse(in);
    }
    const nlohmann::json point = sweep_point(b, run, result, limit, file, log);
    if (!result.is_null() && !point.contains("file")) fs::remove(file);  // over the limit: not a fitting run
    points.push_back(point);
    index(points);
    const std::string status = point["status"];
    progress.end("batch " + std::to_string(b),
                 status == "ok" ? fmt::format("ok, {:.4g} {}", point["samples_per_s"].get<double>(),
                                              point["unit"].get<std::string>())
                                : status + (point.contains("error") ? ": " + point["error"].get<std::string>() : ""));
    if (!schedule.record(status, run, interrupt_requested())) break;
  }
  for (const auto& p : schedule.skipped()) points.push_back(p);
  progress.finish();
  const nlohmann::json sweep = index(points);
  const long long largest_fit = largest_fitting_batch(points);
  human << sweep_table(sweep, dir);
  if (const int status = interrupted_exit_status(); status != 0) return {sweep, status};  // 130, 143
  return {sweep, largest_fit > 0 ? 0 : 1};
}

}  // namespace tbd
