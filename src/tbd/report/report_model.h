// What `tbd report` shows, gathered once from a folder of results through
// the typed document readers, then laid out by the report's outline
// (report_outline) and rendered as Markdown (markdown_report) or
// self-contained HTML (html_report).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tbd/report/result_document.h"
#include "tbd/report/result_set.h"
#include "tbd/report/shapes_document.h"

namespace tbd {

// A result file's run as the report shows it: its figures, its label, the
// file it came from and what its figures mean (findings_of).
struct ReportRun : ResultDocument {
  std::string label, file;
  std::vector<std::string> findings;
};

struct SweepPoint {
  long long batch = 0;
  double throughput = 0, cpu = 0, flops = 0;
  long long peak_bytes = -1;
};

struct SweepSeries {  // runs of one configuration at two or more batch sizes
  std::string label, unit;
  std::vector<SweepPoint> points;  // by batch size
};

struct SweepSummary {  // a tbd.sweep/1 file
  std::string file, workload, stopped_by;
  long long largest_fit = 0;
  std::vector<std::pair<long long, std::string>> statuses;  // batch size, status (and error)
};

struct ScalePoint {
  int nproc = 0;
  double throughput = 0, speedup = 0, efficiency = 0;
};

struct ScaleSeries {  // a tbd.scale/1 file
  std::string label, workload, file, unit;
  std::vector<ScalePoint> points;
};

// One prediction of a tbd.prediction/1 file, with its check when it ran.
struct PredictionRow {
  std::string base_label, workload, what, file, unit;
  int ranks = 0;                   // data-parallel predictions; 0 otherwise
  double predicted = 0;            // samples/s (global), or the first out-of-memory batch
  double measured = 0, error = 0;  // NaN without a check
  double speedup = 0;              // data-parallel: predicted global / the base
};

// `tbd report BASE NEW`: the comparison of the two sets, per configuration.
struct AbRow {
  std::string label, unit, verdict;
  double base_throughput = 0, new_throughput = 0;
  double ratio = 0, low = 0, high = 0;  // time per sample new / base and its CI (NaN: none)
};
struct AbView {
  std::string base_source, new_source;
  std::vector<AbRow> rows;
  std::vector<std::string> only_in_base, only_in_new, warnings;
};

struct NotRun {  // failed, out-of-memory or skipped runs listed by suite and sweep files
  std::string what, status, error, file;
};

struct ReportModel {
  std::string source;
  std::vector<ReportRun> runs;
  std::vector<SweepSeries> sweeps;
  std::vector<SweepSummary> sweep_files;
  std::vector<ScaleSeries> scales;
  std::vector<PredictionRow> predictions;
  std::vector<ShapesDocument> shapes;  // tbd.shapes/1 files
  std::optional<AbView> ab;            // two sources given
  std::vector<NotRun> not_run;
  std::vector<std::string> environments;  // distinct "CPU, cores, LibTorch, threads" lines
  std::vector<std::string> skipped_files;
};

// Throws Error when the folder holds no tbd file at all.
ReportModel build_report_model(const ResultSet& set, const std::string& source);
// The A/B view of two sets (tbd compare's statistics); throws UsageError
// when nothing in them can be compared.
AbView build_ab_view(const ResultSet& base, const ResultSet& candidate, const std::string& base_source,
                     const std::string& new_source);

std::string render_markdown(const ReportModel& model);

// Text from a result file made inert in Markdown: `|` and `\` escaped, `&`,
// `<`, `>` as HTML entities, and every run of line breaks or other control
// characters one space, so a name cannot end a table row, start a heading
// or carry raw HTML.
std::string markdown_text(const std::string& text);
std::string render_html(const ReportModel& model);

// JSON that is safe inside an HTML <script> element: `<`, `>`, `&`, U+2028
// and U+2029 written as \u escapes (the same JSON value), so no text from a
// result file can close the element or open an HTML comment in it.
std::string json_for_script(const nlohmann::json& value);

}  // namespace tbd
