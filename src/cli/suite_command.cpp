// `tbd suite [--preset quick|paper] [--workloads a,b] [--out DIR]`: many
// workloads into one folder, each as a child `tbd run`, with an index file
// (tbd.suite/1). A failing run is recorded with its error and the suite goes
// on; a re-run skips the runs the index records as completed (--force redoes).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tbd/study/child_run.h"
#include "tbd/study/comma_list.h"
#include "cli/commands.h"
#include "tbd/study/folder_lock.h"
#include "tbd/core/utc_time.h"
#include "tbd/core/error.h"
#include "tbd/core/registry.h"
#include "tbd/measure/environment.h"
#include "tbd/measure/interrupt.h"
#include "tbd/measure/probe.h"
#include "tbd/report/mllog.h"
#include "tbd/report/progress.h"
#include "tbd/report/result_file.h"
#include "tbd/report/result_set.h"
#include "tbd/study/suite_presets.h"

namespace tbd::cli {
namespace fs = std::filesystem;
namespace {

nlohmann::json read_index(const std::string& path) {
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

}  // namespace

Command add_suite_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("suite", "Run many workloads into one results folder with an index; "
                                          "failures are recorded and the suite goes on");
  struct Args {
    std::string preset = "quick", workloads, out, mllog, csv;
    std::vector<std::string> per_workload;  // "W:--opt value ..."
    bool force = false, json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--preset", a->preset, "quick (every workload, small scale, ~10 min on 2 cores), paper "
                                         "(full scale, default batch sizes) or gpu (full scale, batch sizes "
                                         "for a large GPU; add --device cuda)")
      ->capture_default_str();
  cmd->add_option("--workloads", a->workloads, "Comma-separated workloads (default: all registered)");
  cmd->add_option("--out", a->out, "Results folder (default: suite-PRESET)");
  cmd->add_option("--for", a->per_workload, "Options for one workload only, as W:OPTIONS, e.g. "
                                           "'resnet50:--batch-size 16' (repeatable)");
  cmd->add_flag("--force", a->force, "Redo runs the index records as completed");
  cmd->add_flag("--json", a->json, "Print the suite's index (index.json) on stdout; the summary goes to stderr");
  cmd->add_option("--mllog", a->mllog, "Append MLPerf-style :::MLLOG lines of every run to this file");
  cmd->add_option("--csv", a->csv, "Append one CSV row per run to this file");
  cmd->allow_extras();
  cmd->footer("Other options (--threads, --device, --precision, ...) are passed to every `tbd run`.\n"
              "Files: DIR/index.json (tbd.suite/1), DIR/W.json (results), DIR/logs/W.log.\n"
              "The folder is locked (DIR/.tbd.lock) while the suite and its runs write into it.\n"
              "Exit status: 0 every run completed, 1 at least one failed (the others still ran),\n"
              "130/143 stopped by SIGINT/SIGTERM (the current run's partial result is kept).");
  return {cmd, [a, cmd]() {
            if (a->preset != "quick" && a->preset != "paper" && a->preset != "gpu")
              throw UsageError("--preset must be quick, paper or gpu, got '" + a->preset + "'");
            const std::vector<std::string> extras = cmd->remaining();
            for (const auto& e : extras)
              if (e == "--out" || e == "--json" || e == "--quiet")
                throw UsageError("tbd suite sets " + e + " of its runs itself; give --out to suite instead");
            std::vector<std::string> workloads = a->workloads.empty() ? workload_names() : split_commas(a->workloads);
            for (const auto& w : workloads) create_workload(w);  // unknown names fail now, listing the known ones
            std::map<std::string, std::vector<std::string>> own_options;
            for (const auto& spec : a->per_workload) {
              const auto colon = spec.find(':');
              if (colon == std::string::npos || colon == 0)
                throw UsageError("--for takes WORKLOAD:OPTIONS, e.g. 'resnet50:--batch-size 16'; got '" + spec + "'");
              const std::string w = spec.substr(0, colon);
              if (std::find(workloads.begin(), workloads.end(), w) == workloads.end())
                throw UsageError("--for names " + w + ", which this suite does not run");
              std::stringstream words(spec.substr(colon + 1));
              for (std::string word; words >> word;) own_options[w].push_back(word);
            }
            if (!a->mllog.empty()) check_log_path(a->mllog, "--mllog");
            if (!a->csv.empty()) check_log_path(a->csv, "--csv");
            const std::string dir = a->out.empty() ? "suite-" + a->preset : a->out;
            check_results_folder(dir, "tbd suite");
            fs::create_directories(fs::path(dir) / "logs");
            const FolderLock lock(dir, command_line(program_args()));
            const std::string index_path = (fs::path(dir) / "index.json").string();
            const nlohmann::json previous = read_index(index_path);

            nlohmann::json index = {{"schema", kSuiteSchema},
                                    {"preset", a->preset},
                                    {"created_utc", previous.is_null() ? utc_now() : previous.value("created_utc", utc_now())},
                                    {"updated_utc", utc_now()},
                                    {"run_options", extras},
                                    {"environment", capture_environment()},
                                    {"runs", nlohmann::json::array()}};
            std::map<std::string, nlohmann::json> earlier;
            if (!previous.is_null())
              for (const auto& r : previous["runs"]) earlier[r.value("workload", "")] = r;
            const auto save = [&](const nlohmann::json& runs) {
              index["runs"] = runs;
              for (const auto& [w, r] : earlier)  // runs of other workloads stay listed
                if (std::find(workloads.begin(), workloads.end(), w) == workloads.end()) index["runs"].push_back(r);
              index["updated_utc"] = utc_now();
              write_json_atomically(index_path, index);
            };

            install_interrupt_handler();
            StudyProgress progress("suite " + a->preset, static_cast<int>(workloads.size()));
            nlohmann::json runs = nlohmann::json::array();
            int failed = 0;
            bool interrupted = false;
            for (const auto& w : workloads) {
              const std::vector<std::string> options =
                  merge_options(merge_options(suite_preset_options(a->preset, w), extras), own_options[w]);
              const std::string file = (fs::path(dir) / (w + ".json")).string();
              const std::string log = (fs::path(dir) / "logs" / (w + ".log")).string();
              nlohmann::json entry = {{"workload", w}, {"options", options}, {"file", w + ".json"},
                                      {"log", "logs/" + w + ".log"}};
              if (interrupted) {
                entry["status"] = "skipped";
                entry["error"] = "the suite was interrupted before this run";
                runs.push_back(entry);
                continue;
              }
              if (auto it = earlier.find(w); !a->force && it != earlier.end() && it->second.value("status", "") == "ok" &&
                                             it->second.value("options", nlohmann::json()) == entry["options"] &&
                                             fs::exists(file)) {
                runs.push_back(it->second);
                progress.end(w, "skipped: completed earlier (--force redoes it)");
                continue;
              }
              std::vector<std::string> args = {program_args()[0], "run", w};
              args.insert(args.end(), options.begin(), options.end());
              args.insert(args.end(), {"--out", file, "--quiet"});
              if (!a->mllog.empty()) args.insert(args.end(), {"--mllog", a->mllog});
              if (!a->csv.empty()) args.insert(args.end(), {"--csv", a->csv});
              fs::remove(file);
              fs::remove(log);
              progress.begin(w);
              entry["started_utc"] = utc_now();
              const ChildOutcome run = run_child(args, log);
              entry["seconds"] = run.seconds;
              entry["exit_status"] = run.exit_code;
              if (run.ok() || (run.interrupted() && fs::exists(file))) {
                std::ifstream in(file);
                const bool partial = nlohmann::json::parse(in).value("partial", false);
                entry["status"] = partial ? "partial" : "ok";
                if (run.interrupted()) entry["error"] = run.error;
                if (partial || run.interrupted()) interrupted = true;
              } else {
                entry["status"] = run.killed() ? "killed" : "failed";
                entry["error"] = run.error;
                entry.erase("file");
                ++failed;
              }
              if (interrupt_requested()) interrupted = true;
              runs.push_back(entry);
              save(runs);
              progress.end(w, entry["status"].get<std::string>() +
                                  (run.ok() ? fmt::format(" ({:.1f} s)", run.seconds) : ": " + run.error));
            }
            progress.finish();
            save(runs);
            int ok = 0, skipped = 0;
            for (const auto& r : runs) {
              const std::string s = r.value("status", "");
              ok += s == "ok";
              skipped += s == "skipped";
            }
            std::ostream& human = a->json ? std::cerr : std::cout;  // stdout holds only the JSON then
            human << fmt::format("suite {}: {} ok, {} failed, {} skipped of {} runs; index {}\n", a->preset, ok,
                                     failed, skipped, runs.size(), index_path);
            for (const auto& r : runs)
              if (r.value("status", "") == "failed")
                human << "  failed: " << r["workload"].get<std::string>() << ": " << r["error"].get<std::string>() << "\n";
            human << "report: tbd report " << dir << " --format html --out " << (fs::path(dir) / "report.html").string()
                      << "\n";
            if (a->json) std::cout << index.dump(2) << "\n";
            if (const int status = interrupted_exit_status(); status != 0) return status;  // 130, 143
            return failed > 0 ? 1 : 0;
          }};
}

}  // namespace tbd::cli
