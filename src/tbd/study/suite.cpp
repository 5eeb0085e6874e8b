#include "tbd/study/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/utc_time.h"
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

std::pair<std::string, std::vector<std::string>> read_for_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos || colon == 0)
    throw UsageError("--for takes WORKLOAD:OPTIONS, e.g. 'resnet50:--batch-size 16'; got '" + spec + "'");
  const std::string w = spec.substr(0, colon);
  // Words as a shell splits them, so `--set 'name=a b'` stays one value.
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char c : spec.substr(colon + 1)) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote)
    throw UsageError("--for " + w + ": the quote " + std::string(1, quote) + " is not closed in '" + spec +
                     "'; close it, or drop it");
  if (in_word) words.push_back(word);
  return {w, words};
}

std::vector<SuiteRun> plan_suite(const std::string& preset, const std::optional<std::string>& workloads,
                                 const std::vector<std::string>& run_options,
                                 const std::vector<std::string>& per_workload) {
  const auto presets = suite_preset_names();
  if (std::find(presets.begin(), presets.end(), preset) == presets.end())
    throw UsageError("--preset must be quick, paper or gpu, got '" + preset + "'");
  const std::vector<std::string> names =
      workloads ? list_items(*workloads, "--workloads", "ncf,dlrm") : workload_names();
  for (const auto& w : names) create_workload(w);  // unknown names fail now, listing the known ones
  std::map<std::string, std::vector<std::string>> own;
  for (const auto& spec : per_workload) {
    auto [w, words] = read_for_spec(spec);
    if (std::find(names.begin(), names.end(), w) == names.end())
      throw UsageError("--for names " + w + ", which this suite does not run");
    own[w].insert(own[w].end(), words.begin(), words.end());
  }
  std::vector<SuiteRun> runs;
  for (const auto& w : names)
    runs.push_back({w, merge_options(merge_options(suite_preset_options(preset, w), run_options), own[w])});
  return runs;
}

nlohmann::json read_suite_index(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  std::ifstream in(path);
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond double's range
    throw Error(path + ": the suite index is not valid JSON (" + e.what() + "); remove it to start the suite afresh");
  }
  if (!index.is_object() || index.value("schema", "") != kSuiteSchema || !index.contains("runs") ||
      !index["runs"].is_array())
    throw Error(path + ": not a " + std::string(kSuiteSchema) + " index; give --out a new folder");
  return index;
}

bool completed_earlier(const nlohmann::json& earlier, const nlohmann::json& entry, bool result_exists) {
  return earlier.is_object() && earlier.value("status", "") == "ok" &&
         earlier.value("options", nlohmann::json()) == entry.value("options", nlohmann::json()) && result_exists;
}

nlohmann::json finish_suite_entry(nlohmann::json entry, const ChildOutcome& run, const nlohmann::json& result) {
  entry["seconds"] = run.seconds;
  entry["exit_status"] = run.exit_code;
  if (!result.is_null()) {
    entry["status"] = result.value("partial", false) ? "partial" : "ok";
    if (run.interrupted()) entry["error"] = run.error;
  } else {
    entry["status"] = run.killed() ? "killed" : "failed";
    entry["error"] = run.error;
    entry.erase("file");
  }
  return entry;
}

bool suite_stops_after(const nlohmann::json& entry, const ChildOutcome& run) {
  const std::string status = entry.value("status", "");
  return status == "partial" || (status == "ok" && run.interrupted());
}

nlohmann::json suite_index_runs(const nlohmann::json& runs, const std::map<std::string, nlohmann::json>& earlier,
                                const std::vector<SuiteRun>& plan) {
  nlohmann::json all = runs;
  for (const auto& [w, r] : earlier) {
    const bool ours = std::any_of(plan.begin(), plan.end(), [&](const SuiteRun& run) { return run.workload == w; });
    if (!ours) all.push_back(r);  // runs of other workloads stay listed
  }
  return all;
}

int failed_runs(const nlohmann::json& runs) {
  int failed = 0;
  for (const auto& r : runs) {
    const std::string s = r.value("status", "");
    failed += s == "failed" || s == "killed";
  }
  return failed;
}

std::string suite_summary(const std::string& preset, const nlohmann::json& runs, const std::string& dir) {
  int ok = 0, skipped = 0;
  for (const auto& r : runs) {
    const std::string s = r.value("status", "");
    ok += s == "ok";
    skipped += s == "skipped";
  }
  std::string text = fmt::format("suite {}: {} ok, {} failed, {} skipped of {} runs; index {}\n", preset, ok,
                                 failed_runs(runs), skipped, runs.size(), (fs::path(dir) / "index.json").string());
  for (const auto& r : runs)
    if (r.value("status", "") == "failed")
      text += "  failed: " + r["workload"].get<std::string>() + ": " + r["error"].get<std::string>() + "\n";
  text += "report: tbd report " + dir + " --format html --out " + (fs::path(dir) / "report.html").string() + "\n";
  return text;
}

StudyOutcome run_suite(const SuiteRequest& request, std::ostream& human) {
  if (!request.mllog.empty()) check_log_path(request.mllog, "--mllog");
  if (!request.csv.empty()) check_log_path(request.csv, "--csv");
  check_distinct_outputs({{"--mllog", request.mllog}, {"--csv", request.csv}});  // every run appends to both
  const std::string dir = request.out.empty() ? "suite-" + request.preset : request.out;
  check_results_folder(dir, "tbd suite");
  create_results_folder(dir, "--out");
  create_results_folder((fs::path(dir) / "logs").string(), "--out");
  const FolderLock lock(dir, request.command);
  const std::string index_path = (fs::path(dir) / "index.json").string();
  const nlohmann::json previous = read_suite_index(index_path);

  nlohmann::json index = {{"schema", kSuiteSchema},
                          {"preset", request.preset},
                          {"created_utc", previous.is_null() ? utc_now() : previous.value("created_utc", utc_now())},
                          {"updated_utc", utc_now()},
                          {"run_options", request.run_options},
                          {"environment", capture_environment()},
                          {"runs", nlohmann::json::array()}};
  std::map<std::string, nlohmann::json> earlier;
  if (!previous.is_null())
    for (const auto& r : previous["runs"]) earlier[r.value("workload", "")] = r;
  const auto save = [&](const nlohmann::json& runs) {
    index["runs"] = suite_index_runs(runs, earlier, request.runs);
    index["updated_utc"] = utc_now();
    write_json_atomically(index_path, index);
  };

  install_interrupt_handler();
  StudyProgress progress("suite " + request.preset, static_cast<int>(request.runs.size()));
  nlohmann::json runs = nlohmann::json::array();
  bool interrupted = false;
  for (const auto& [w, options] : request.runs) {
    const std::string file = (fs::path(dir) / (w + ".json")).string();
    const std::string log = (fs::path(dir) / "logs" / (w + ".log")).string();
    nlohmann::json entry = {
        {"workload", w}, {"options", options}, {"file", w + ".json"}, {"log", "logs/" + w + ".log"}};
    if (interrupted) {
      entry["status"] = "skipped";
      entry["error"] = "the suite was interrupted before this run";
      runs.push_back(entry);
      continue;
    }
    if (auto it = earlier.find(w);
        !request.force && it != earlier.end() && completed_earlier(it->second, entry, fs::exists(file))) {
      runs.push_back(it->second);
      progress.end(w, "skipped: completed earlier (--force redoes it)");
      continue;
    }
    std::vector<std::string> args = {request.program, "run", w};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--out", file, "--quiet"});
    if (!request.mllog.empty()) args.insert(args.end(), {"--mllog", request.mllog});
    if (!request.csv.empty()) args.insert(args.end(), {"--csv", request.csv});
    fs::remove(file);
    fs::remove(log);
    progress.begin(w);
    entry["started_utc"] = utc_now();
    const ChildOutcome run = run_child(args, log);
    nlohmann::json result;  // null: the run wrote no result to read
    if (run.ok() || (run.interrupted() && fs::exists(file))) {
      std::ifstream in(file);
      result = nlohmann::json::parse(in);
    }
    entry = finish_suite_entry(entry, run, result);
    if (suite_stops_after(entry, run) || interrupt_requested()) interrupted = true;
    runs.push_back(entry);
    save(runs);
    progress.end(w, entry["status"].get<std::string>() +
                        (run.ok() ? fmt::format(" ({:.1f} s)", run.seconds) : ": " + run.error));
  }
  progress.finish();
  save(runs);
  human << suite_summary(request.preset, runs, dir);
  if (const int status = interrupted_exit_status(); status != 0) return {index, status};  // 130, 143
  return {index, failed_runs(runs) > 0 ? 1 : 0};
}

}  // namespace tbd
