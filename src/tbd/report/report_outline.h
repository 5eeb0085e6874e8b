// The report's outline: its sections in order, each an analysis of the
// ReportModel that returns what the section shows as typed parts (tables,
// text, lists and the chart that belongs to a table), the shape of HTA's
// analyses. Drawing is the renderers' job: render_markdown and render_html
// walk this one list, so both formats show the same sections, the same
// columns and the same "not available" reasons.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tbd/report/report_model.h"

namespace tbd {

// Cells are plain text; each renderer escapes them for its format.
struct ReportTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string align;  // one 'l' or 'r' per column; empty: the first left, the others right
};
struct ReportSubheading {  // one run or series of a section
  std::string text;
};
struct ReportParagraph {
  std::string text;
};
struct ReportList {
  std::vector<std::string> items;
};
struct ReportNotAvailable {  // shown as "Not available: REASON."
  std::string reason;
};

// A chart the HTML report draws from the model beside a table (Markdown has
// none); `index` names the run, sweep series or scale file it draws.
enum class ReportChartKind {
  kThroughput,
  kAbChange,
  kSweep,
  kMemoryAtPeak,
  kMemoryTimeline,
  kPhases,
  kRoofline,
  kOpClasses,
  kLayers,
  kScalingEfficiency,
  kScalingSpeedup,
  kDispersion,
  kShapes  // index: the layer shape's place over all shapes files, in order
};
struct ReportChart {
  ReportChartKind kind;
  size_t index = 0;
};

using ReportPart =
    std::variant<ReportSubheading, ReportParagraph, ReportList, ReportTable, ReportChart, ReportNotAvailable>;

struct ReportSection {
  std::string title;  // empty: no heading (the machines, the files ignored)
  std::vector<ReportPart> parts;
};

// A section's analysis: nothing where the section is left out (no A/B
// asked, no failed run, no file ignored).
using ReportAnalysis = std::optional<ReportSection> (*)(const ReportModel&);

// The analyses in the order the report shows their sections.
const std::vector<ReportAnalysis>& report_outline();

// The outline applied to a model: the sections both renderers draw.
std::vector<ReportSection> report_sections(const ReportModel& model);

}  // namespace tbd
