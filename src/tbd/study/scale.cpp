#include "tbd/study/scale.h"
#include "tbd/core/number_text.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/number_format.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/measure/machine/environment.h"
#include "tbd/measure/runner.h"
#include "tbd/output/result_file.h"
#include "tbd/report/result_set.h"
#include "tbd/study/comma_list.h"
#include "tbd/workloads/registry.h"

namespace tbd {
namespace fs = std::filesystem;

std::vector<int> parse_process_counts(const std::string& text) {
  std::vector<int> counts;
  for (const auto& part : list_items(text, "--nproc", "1,2,4")) {
    const auto n = integer_from_text(part);
    if (!n || *n < 1 || *n > 1024)
      throw UsageError("--nproc takes a comma-separated list of process counts such as 1,2,4; got '" + text + "'");
    counts.push_back(static_cast<int>(*n));
  }
  return counts;
}

ScalingFigures scaling_figures(int nproc, double rate, int baseline_nproc, double baseline_rate) {
  if (!(baseline_rate > 0)) return {};
  return {rate / baseline_rate, rate * baseline_nproc / (nproc * baseline_rate)};
}

std::string scale_table_header() {
  return fmt::format("{:>6} {:>16} {:>9} {:>11}\n", "nproc", "samples/s", "speed-up", "efficiency");
}

std::string scale_table_row(int nproc, double rate, const ScalingFigures& figures) {
  return fmt::format("{:>6} {:>16} {:>9.3f} {:>10.1f}%\n", nproc, format_number(rate), figures.speedup,
                     100 * figures.efficiency);
}

std::string scale_table_footer(const std::string& unit, int baseline_nproc) {
  return fmt::format(
      "throughput in {} across all processes; efficiency = throughput(n) / "
      "(n · throughput per process at {})\n",
      unit, baseline_nproc);
}

namespace {

// The runs' result files live only as long as the study: their documents
// end up inside the scaling result.
struct ScratchFolder {
  fs::path path;
  ScratchFolder() {
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    if (!ec) path = tmp / ("tbd-scale-" + std::to_string(::getpid()));
    if (!ec) fs::create_directories(path, ec);
    if (ec)
      throw UsageError("tbd scale cannot create its scratch folder in the temporary folder " + tmp.string() + " (" +
                       ec.message() + "); set TMPDIR to a folder you can write");
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

StudyOutcome run_scale(const ScaleRequest& request, std::ostream& human) {
  const int most = *std::max_element(request.counts.begin(), request.counts.end());
  check_data_parallel_supported(create_workload(request.workload)->info(), most);
  if (!request.out.empty()) check_output_path(request.out);
  if (!request.oversubscribe) check_local_ranks_fit(most, request.run.options.device == "cpu");
  const ScratchFolder dir;
  nlohmann::json points = nlohmann::json::array();
  const int baseline_nproc = request.counts.front();
  double baseline = 0;  // throughput at the first process count
  human << scale_table_header();
  for (int n : request.counts) {
    const std::string file = (dir.path / ("nproc-" + std::to_string(n) + ".json")).string();
    std::vector<std::string> args = {request.program, "run", request.workload};
    args.insert(args.end(), request.run.tokens.begin(), request.run.tokens.end());
    args.insert(args.end(), {"--nproc", std::to_string(n), "--out", file, "--quiet"});
    const int rc = run_local_workers(args, n);
    // Stopped by SIGINT/SIGTERM: rank 0's partial result is the last point, and
    // the points so far are kept (as a sweep's and a suite's are).
    const bool interrupted = interrupt_requested();
    if (interrupted && (rc != interrupted_exit_status() || !fs::exists(file))) break;
    if (rc == 2) throw UsageError("the runs of tbd scale were refused (see above)");
    if (rc != 0 && !interrupted) throw Error("the run with " + std::to_string(n) + " process(es) failed (see above)");
    std::ifstream in(file);
    const nlohmann::json r = nlohmann::json::parse(in);
    const double rate = throughput_of(r);
    if (baseline == 0) baseline = rate;
    const ScalingFigures figures = scaling_figures(n, rate, baseline_nproc, baseline);
    human << scale_table_row(n, rate, figures);
    points.push_back({{"nproc", n},
                      {"samples_per_s", rate},
                      {"speedup", figures.speedup},
                      {"efficiency", figures.efficiency},
                      {"result", r}});
    if (interrupted) break;
  }
  const int stopped = interrupted_exit_status();  // 130, 143; 0 when no signal came
  if (points.empty()) {                           // stopped before any run wrote its result: nothing to keep
    human << "stopped by " << signal_name(interrupt_signal()) << " before any process count was measured\n";
    return {nullptr, stopped};
  }
  const std::string unit = throughput_unit(points[0]["result"]);
  human << scale_table_footer(unit, baseline_nproc);
  nlohmann::json scale = {{"schema", "tbd.scale/1"},
                          {"workload", request.workload},
                          {"unit", unit},
                          {"baseline_nproc", baseline_nproc},
                          {"points", points},
                          {"environment", capture_environment()}};
  if (stopped != 0) {
    scale["partial"] = true;
    const bool last_partial = points.back()["result"].value("partial", false);
    human << "stopped by " << signal_name(interrupt_signal()) << ": " << points.size() << " of "
          << request.counts.size() << " process counts measured" << (last_partial ? " (the last one partial)" : "")
          << "\n";
  }
  if (!request.out.empty()) write_json_atomically(request.out, scale);
  return {scale, stopped};
}

}  // namespace tbd
