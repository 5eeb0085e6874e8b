#include "tbd/report/report_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "tbd/core/error.h"
#include "tbd/core/number_format.h"
#include "tbd/measure/ops/layer_attribution.h"
#include "tbd/report/compare.h"
#include "tbd/report/findings.h"
#include "tbd/report/prediction_document.h"
#include "tbd/report/study_documents.h"

namespace tbd {
namespace fs = std::filesystem;
namespace {

std::string relative_to(const std::string& file, const std::string& source) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return fs::path(file).filename().string();
  const auto rel = fs::relative(file, source, ec);
  return ec || rel.empty() ? file : rel.string();
}

// "Fixture CPU, 2 cores available, LibTorch 2.13.0, host fixture": the machine line of a run.
std::string machine_line(const RunMachine& m) {
  if (!m.recorded) return "environment not recorded";
  std::string line = m.cpu_model.value_or("unknown CPU");
  if (m.cores_available) line += ", " + *m.cores_available + " cores available";
  if (m.libtorch) line += ", LibTorch " + *m.libtorch;
  if (m.hostname) line += ", host " + *m.hostname;
  return line;
}

PredictionRow prediction_row(const Prediction& p, const std::string& base_label, const std::string& file) {
  PredictionRow row{base_label, base_label.substr(0, base_label.find(' ')), "", file, p.unit};
  row.measured = row.error = NAN;
  switch (p.kind) {
    case PredictionKind::kDataParallel:
      row.ranks = p.ranks;
      row.what = fmt::format("{} data-parallel ranks", row.ranks);
      row.predicted = p.global_samples_per_s;
      row.speedup = p.speedup;
      if (p.check && p.check->kind == PredictionCheck::Kind::kMeasuredRun) {
        row.measured = p.check->measured_global_samples_per_s;
        row.error = p.check->error;
      }
      break;
    case PredictionKind::kClassSpeedup:
      for (const auto& c : p.classes)
        row.what += (row.what.empty() ? "" : ", ") + fmt::format("{} {:g}x faster", c.name, c.factor);
      row.predicted = p.samples_per_s;
      break;
    case PredictionKind::kRoofline:
      row.what = "every operator at its ceiling";
      row.predicted = p.samples_per_s;
      break;
    case PredictionKind::kMemoryLimit:
      row.what = "first batch of the doubling sequence over " + format_bytes(p.limit_bytes);
      row.unit = "batch";
      row.predicted = p.first_out_of_memory_doubling ? static_cast<double>(*p.first_out_of_memory_doubling) : NAN;
      if (p.check && p.check->measured_first_out_of_memory_batch)
        row.measured = static_cast<double>(*p.check->measured_first_out_of_memory_batch);
      if (std::isfinite(row.measured) && row.measured > 0) row.error = row.predicted / row.measured - 1;
      break;
    case PredictionKind::kShardedMemory:
      row.ranks = p.ranks;
      row.what = fmt::format("peak memory per rank, {} ranks, --sharding {}", p.ranks, p.sharding);
      row.unit = "bytes";
      row.predicted = p.peak_bytes_per_rank;
      if (p.check && p.check->kind == PredictionCheck::Kind::kShardedRun) {
        row.measured = p.check->measured_peak_bytes;
        row.error = p.check->peak_error;
      }
      break;
    case PredictionKind::kUnknown: break;
  }
  return row;
}

void add_predictions(ReportModel& m, const LoadedDocument& doc, const std::string& source) {
  const std::string file = relative_to(doc.file, source);
  const PredictionDocument d = read_prediction_document(doc.doc);
  for (const auto& p : d.predictions)
    if (p.kind != PredictionKind::kUnknown) m.predictions.push_back(prediction_row(p, d.base_label, file));
}

// A sweep's index: what it tried and where it stopped; the batch sizes that
// did not run go to `not_run`.
SweepSummary sweep_summary(const LoadedDocument& doc, const std::string& source, std::vector<NotRun>& not_run) {
  const SweepDocument d = read_sweep_document(doc.doc);
  SweepSummary s{relative_to(doc.file, source), d.workload, d.stopped_by, d.largest_fitting.value_or(0), {}};
  for (const auto& p : d.points) {
    s.statuses.push_back({p.batch, p.status});
    if (p.status != "ok")
      not_run.push_back({s.workload + " batch " + std::to_string(p.batch), p.status, p.error, s.file});
  }
  return s;
}

// A scaling study, labelled "resnet50 tiny b4/process" by its first point.
ScaleSeries scale_series(const LoadedDocument& doc, const std::string& source) {
  const ScaleDocument d = read_scale_document(doc.doc);
  ScaleSeries s{d.workload, d.workload, relative_to(doc.file, source), d.unit, {}};
  if (d.configuration)
    s.label += " " + d.configuration->first + " b" + std::to_string(d.configuration->second) + "/process";
  for (const auto& p : d.points)
    s.points.push_back({static_cast<int>(p.nproc), p.samples_per_s, p.speedup, p.efficiency});
  return s;
}

}  // namespace

AbView build_ab_view(const ResultSet& base, const ResultSet& candidate, const std::string& base_source,
                     const std::string& new_source) {
  const Comparison c = compare_results(base, candidate, CompareOptions{}, base_source, new_source);
  AbView v;
  v.base_source = base_source;
  v.new_source = new_source;
  for (const auto& r : c.runs) {
    const auto& s = r.stats;
    AbRow row{r.label, r.unit, r.verdict};
    row.base_throughput = s.base_seconds_per_sample > 0 ? 1 / s.base_seconds_per_sample : NAN;
    row.new_throughput = s.new_seconds_per_sample > 0 ? 1 / s.new_seconds_per_sample : NAN;
    row.ratio = s.ratio > 0 ? s.ratio : NAN;  // 0: a side had no timed repetition
    row.low = s.has_interval ? s.low : NAN;
    row.high = s.has_interval ? s.high : NAN;
    v.rows.push_back(row);
  }
  v.only_in_base = c.only_in_base;
  v.only_in_new = c.only_in_new;
  v.warnings = c.warnings;
  return v;
}

ReportModel build_report_model(const ResultSet& set, const std::string& source) {
  ReportModel m;
  m.source = source;
  if (set.runs.empty() && set.sweeps.empty() && set.suites.empty() && set.scales.empty() && set.predictions.empty() &&
      set.shapes.empty())
    throw Error(source +
                ": no tbd results here (files with \"schema\": \"tbd.result/1\", tbd.scale/1, tbd.sweep/1 or "
                "tbd.suite/1); run tbd run --out, tbd sweep or tbd suite first");
  for (const auto& f : set.skipped) m.skipped_files.push_back(relative_to(f, source));
  std::set<std::string> environments;
  std::map<std::string, std::vector<const ReportRun*>> by_series;
  std::vector<std::pair<std::string, ReportRun>> keyed;  // the series key of each run
  for (const auto& run : set.runs) {
    const auto& r = run.result;
    ReportRun row;
    static_cast<ResultDocument&>(row) = read_result_document(r);
    environments.insert(machine_line(row.machine));
    if (!run.origin.empty()) continue;  // runs inside scale files appear in the scaling section
    row.label = configuration_label(r);
    row.file = relative_to(run.file, source);
    row.findings = findings_of(r);
    keyed.push_back({configuration_key_without_batch(r), std::move(row)});
  }
  for (const auto& [key, row] : keyed) m.runs.push_back(row);
  std::sort(m.runs.begin(), m.runs.end(), [](const ReportRun& a, const ReportRun& b) {
    return std::tie(a.workload, a.batch, a.label) < std::tie(b.workload, b.batch, b.label);
  });
  for (const auto& [key, row] : keyed) by_series[key].push_back(&row);
  for (const auto& [key, results] : by_series) {
    std::map<long long, const ReportRun*> by_batch;  // the last run of a batch size wins
    for (const auto* r : results) by_batch[r->batch] = r;
    if (by_batch.size() < 2) continue;
    SweepSeries s;
    const auto& first = *by_batch.begin()->second;
    s.unit = first.unit;
    s.label = first.label;
    // The label without its batch part: "resnet50 tiny b4 fp32" -> "resnet50 tiny fp32".
    const std::string b = " b" + std::to_string(by_batch.begin()->first);
    if (auto pos = s.label.find(b + " "); pos != std::string::npos) s.label.erase(pos, b.size());
    for (const auto& [batch, r] : by_batch) s.points.push_back({batch, r->throughput, r->cpu, r->flops, r->peak_bytes});
    m.sweeps.push_back(s);
  }
  for (const auto& doc : set.sweeps) m.sweep_files.push_back(sweep_summary(doc, source, m.not_run));
  for (const auto& doc : set.scales) m.scales.push_back(scale_series(doc, source));
  for (const auto& doc : set.predictions) add_predictions(m, doc, source);
  for (const auto& doc : set.shapes) m.shapes.push_back(read_shapes_document(doc.doc, relative_to(doc.file, source)));
  for (const auto& doc : set.suites)
    for (const auto& r : read_suite_document(doc.doc).runs)
      if (r.status != "ok") m.not_run.push_back({r.workload, r.status, r.error, relative_to(doc.file, source)});
  m.environments.assign(environments.begin(), environments.end());
  return m;
}

}  // namespace tbd
