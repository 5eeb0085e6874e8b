// The report's one outline: Markdown and HTML show the same sections, the
// same table columns and the same "not available" reasons, because both
// walk report_outline().
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "tbd/report/report_model.h"
#include "tbd/report/report_outline.h"

namespace tbd {
namespace {

// A model with something in every section.
ReportModel full_model() {
  ReportModel m;
  m.source = "results";
  m.environments = {"Test CPU, 2 cores available"};
  ReportRun r;
  r.label = "resnet50 tiny b4 fp32";
  r.file = "r.json";
  r.workload = "resnet50";
  r.unit = "images/s";
  r.batch = 4;
  r.throughput = 40, r.median_s = 0.1, r.cv = 0.02, r.cpu = 0.5, r.flops = 0.1, r.ci_low = 38, r.ci_high = 42;
  r.peak_bytes = 1000;
  r.times = {0.1, 0.11, 0.09};
  for (const auto& c : memory_categories()) r.memory.push_back({c, 125});
  r.op_classes = {{"conv", 0.75}, {"gemm", 0.25}};
  for (const auto& p : report_phases()) r.phases_ms.push_back({p, 1.0});
  r.roofline.judged = true;
  r.roofline.peak_flops_per_s = 1e11, r.roofline.bandwidth_bytes_per_s = 1e10;
  r.roofline.points = {{"aten::mm", 50, 3e10, 0.006}};
  r.roofline.compute_s = 0.006, r.roofline.top_op = "aten::mm", r.roofline.top_bound = "compute";
  r.roofline.top_headroom_s = 0.004;
  r.layers = {{"layer1", 2, 4, 0.6, "compute", 3}};
  r.memory_timeline.t_s = {0, 0.001};
  for (size_t c = 0; c < memory_categories().size(); ++c) r.memory_timeline.bytes.push_back({100, 200});
  r.findings = {"Time: backward 50% and forward 30% of the 10 ms iteration."};
  r.on_gpu = true;
  r.achieved_flops = 1e12, r.gpu_util = 0.8, r.kernel_busy = 0.9, r.device_median_s = 0.01, r.fragmentation = 0.1;
  m.runs = {r};
  m.sweeps = {{"resnet50 tiny fp32", "images/s", {{1, 10, 0.5, 0.1, 100}, {2, 18, 0.6, 0.2, 200}}}};
  m.sweep_files = {{"sweep.json", "resnet50", "out of memory at batch size 8", 4, {{4, "ok"}, {8, "out_of_memory"}}}};
  m.scales = {{"resnet50 tiny b4/process", "resnet50", "scale.json", "images/s", {{1, 10, 1, 1}, {2, 18, 1.8, 0.9}}}};
  m.predictions = {
      {"resnet50 tiny b4 fp32", "resnet50", "2 data-parallel ranks", "p.json", "images/s", 2, 19, 18, 0.05, 1.9}};
  ShapesLayer layer{"layer3.0.conv2",
                    "[8, 64, 14, 14] conv2d 3x3",
                    64,
                    0.1,
                    "56 channels take 2.00x the time of 64",
                    {{56, 0.002, 0.0019, 0.0021, true, false}, {64, 0.001, 0.0009, 0.0011, false, true}}};
  m.shapes = {{"resnet50", "shapes.json", 0.1, 0.75, 0.099, 0.099, {layer}}};
  m.ab =
      AbView{"base", "new", {{"resnet50 tiny b4 fp32", "images", "no change", 40, 41, 0.98, 0.95, 1.01}}, {}, {}, {}};
  m.not_run = {{"gpt", "failed", "out of memory", "index.json"}};
  m.skipped_files = {"trace.json"};
  return m;
}

struct Outline {
  std::vector<std::string> titles;
  std::vector<std::vector<std::string>> columns;  // each table's header
  std::vector<std::string> not_available;
};

std::string unescape_html(std::string s) {
  for (const auto& [entity, c] :
       std::vector<std::pair<std::string, std::string>>{{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t at = s.find(entity); at != std::string::npos; at = s.find(entity, at + 1))
      s.replace(at, entity.size(), c);
  return s;
}

Outline markdown_outline(const std::string& md) {
  Outline o;
  std::istringstream in(md);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("## ", 0) == 0) o.titles.push_back(line.substr(3));
    if (line.rfind("Not available: ", 0) == 0) o.not_available.push_back(line);
    if (line.rfind("| ", 0) == 0 && i + 1 < lines.size() && lines[i + 1].rfind("|---", 0) == 0) {
      std::vector<std::string> header;
      for (size_t at = 2; at < line.size();) {
        const size_t end = line.find(" |", at);
        header.push_back(line.substr(at, end - at));
        at = end + 3;
      }
      o.columns.push_back(header);
    }
  }
  return o;
}

Outline html_outline(const std::string& html) {
  Outline o;
  const std::regex title("<h2>(.*?)</h2>"), head("<thead><tr>(.*?)</tr></thead>"), cell("<th>(.*?)</th>"),
      na("<p class=\"na\">(.*?)</p>");
  for (std::sregex_iterator it(html.begin(), html.end(), title), end; it != end; ++it)
    o.titles.push_back(unescape_html((*it)[1]));
  for (std::sregex_iterator it(html.begin(), html.end(), head), end; it != end; ++it) {
    const std::string row = (*it)[1];
    std::vector<std::string> header;
    for (std::sregex_iterator c(row.begin(), row.end(), cell); c != end; ++c) header.push_back(unescape_html((*c)[1]));
    o.columns.push_back(header);
  }
  for (std::sregex_iterator it(html.begin(), html.end(), na), end; it != end; ++it)
    o.not_available.push_back(unescape_html((*it)[1]));
  return o;
}

TEST(ReportOutline, BothFormatsShowTheSameSectionsAndColumns) {
  const ReportModel m = full_model();
  const Outline md = markdown_outline(render_markdown(m)), html = html_outline(render_html(m));
  EXPECT_EQ(md.titles, html.titles);
  EXPECT_EQ(md.columns, html.columns);
  EXPECT_TRUE(md.not_available.empty()) << md.not_available.front();
  EXPECT_TRUE(html.not_available.empty()) << html.not_available.front();
  // Every titled section of the outline, in its order, and every table in it.
  std::vector<std::string> titles;
  std::vector<std::vector<std::string>> columns;
  for (const auto& s : report_sections(m)) {
    if (!s.title.empty()) titles.push_back(s.title);
    for (const auto& part : s.parts)
      if (const auto* t = std::get_if<ReportTable>(&part)) columns.push_back(t->header);
  }
  EXPECT_EQ(md.titles, titles);
  EXPECT_EQ(md.columns, columns);
  EXPECT_EQ(md.titles.size(), 16u);  // A/B, runs, ..., layer shapes, dispersion
  // The runs table has the throughput's 95% CI in both.
  ASSERT_FALSE(html.columns.empty());
  EXPECT_EQ(html.columns[1][2], "95% CI");
}

TEST(ReportOutline, SectionsWithoutDataGiveTheSameReasonInBothFormats) {
  ReportModel m;
  m.source = "empty";
  const Outline md = markdown_outline(render_markdown(m)), html = html_outline(render_html(m));
  EXPECT_EQ(md.titles, html.titles);
  EXPECT_EQ(md.not_available, html.not_available);
  EXPECT_EQ(md.not_available.size(), 15u);  // machines and every titled section but the optional ones
  EXPECT_EQ(md.not_available.front(), "Not available: no result file.");
}

}  // namespace
}  // namespace tbd
