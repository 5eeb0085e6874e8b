// Hostile result files: text that would inject markup into the HTML and
// Markdown reports or formulas into the CSV log, fields of the wrong JSON
// type, and symbolic-link loops in a results folder. Each must give a clean
// report or an error naming the file (and the field), never a broken page or
// a JSON-library message.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/output/csv_log.h"
#include "tbd/report/report_model.h"
#include "tbd/report/result_set.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;

// Closes the JSON script element, opens an HTML comment and a script (which
// makes the parser swallow everything up to the page's last </script>), and
// carries the characters that JavaScript once treated as line ends.
const std::string kHostile = "</script><!--<script>&amp;\u2028\u2029x";

nlohmann::json result(const std::string& name, int batch = 4) {
  return {{"schema", "tbd.result/1"},
          {"workload",
           {{"name", name},
            {"settings", nlohmann::json::object()},
            {"options",
             {{"scale", "tiny"},
              {"batch_size", batch},
              {"precision", "fp32"},
              {"device", "cpu"},
              {"threads", 1},
              {"data", "synthetic"},
              {"settings", nlohmann::json::object()}}}}},
          {"environment", {{"cpu", {{"model", "Test CPU"}}}, {"os", {{"hostname", "host"}}}}},
          {"iterations", {0.10, 0.11, 0.12, 0.10}},
          {"summary", {{"median_s", 0.105}, {"mean_s", 0.1075}, {"cv", 0.08}}},
          {"throughput", {{"samples_per_s", 37.2}, {"unit", "images/s"}}},
          {"partial", false}};
}

std::string write(const TempDir& dir, const std::string& name, const nlohmann::json& doc) {
  std::ofstream(dir / name) << doc.dump();
  return dir / name;
}

ReportModel model_of(const TempDir& dir) {
  return build_report_model(load_results(dir.path().string()), dir.path().string());
}

TEST(ReportEscaping, ScriptJsonHasNoMarkupCharactersAndKeepsItsValue) {
  const nlohmann::json value = {{"label", kHostile}, {"n", {1, -2.5}}};
  const std::string text = json_for_script(value);
  for (const char* bad : {"<", ">", "&", "\u2028", "\u2029"})
    EXPECT_EQ(text.find(bad), std::string::npos) << bad << " in " << text;
  EXPECT_NE(text.find("\\u003c/script\\u003e\\u003c!--\\u003cscript\\u003e\\u0026amp;\\u2028\\u2029x"),
            std::string::npos)
      << text;
  EXPECT_EQ(nlohmann::json::parse(text), value);  // the same JSON value
  // Invalid UTF-8 from a hand-edited file is replaced, not thrown.
  EXPECT_NO_THROW(json_for_script(nlohmann::json("bad \xff byte")));
}

TEST(ReportEscaping, HostileWorkloadNameCannotBreakTheHtmlPage) {
  TempDir dir;
  write(dir, "a.json", result(kHostile, 2));
  write(dir, "b.json", result(kHostile, 4));  // two batch sizes: the sweep charts carry the name too
  const std::string html = render_html(model_of(dir));
  // The chart data: one JSON script element, up to the first "</script" after it.
  const std::string open = "<script type=\"application/json\" id=\"tbd-charts\">";
  const auto begin = html.find(open);
  ASSERT_NE(begin, std::string::npos);
  const auto end = html.find("</script>", begin);
  const std::string data = html.substr(begin + open.size(), end - begin - open.size());
  EXPECT_EQ(data.find('<'), std::string::npos) << data.substr(0, 200);
  const auto charts = nlohmann::json::parse(data);  // all of it, not cut short by the name
  ASSERT_GE(charts.size(), 2u);
  EXPECT_NE(charts.dump().find(kHostile), std::string::npos);  // the name survives as text
  // After the head (Chart.js), the page has its own two script elements and
  // no other; the name shows escaped in the tables.
  const auto body = html.find("</head>");
  ASSERT_NE(body, std::string::npos);
  size_t scripts = 0;
  for (auto at = html.find("<script", body); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);  // the chart data and the code that draws it
  EXPECT_EQ(html.find("<!--", body), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;!--&lt;script&gt;&amp;amp;"), std::string::npos);
}

TEST(ReportEscaping, MarkdownTextCannotAddLinesCellsOrHtml) {
  EXPECT_EQ(markdown_text("a|b"), "a\\|b");
  EXPECT_EQ(markdown_text("x\r\n\n# injected"), "x # injected");
  EXPECT_EQ(markdown_text("<img src=x onerror=alert(1)> & co"), "&lt;img src=x onerror=alert(1)&gt; &amp; co");
  EXPECT_EQ(markdown_text("C:\\runs\\|"), "C:\\\\runs\\\\\\|");
  EXPECT_EQ(markdown_text("plain resnet50 tiny b4"), "plain resnet50 tiny b4");

  TempDir dir;
  const std::string name = "evil\n# Injected heading\n<script>alert(1)</script>|cell";
  nlohmann::json r = result(name);
  r["environment"]["os"]["hostname"] = "host\n## Machines are mine";
  r["throughput"]["unit"] = "img|s\n---";
  write(dir, "r.json", r);
  const std::string md = render_markdown(model_of(dir));
  std::istringstream lines(md);
  std::vector<size_t> cells_per_row;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("# Injected", 0), 0u) << line;
    EXPECT_NE(line.rfind("## Machines are mine", 0), 0u) << line;
    EXPECT_NE(line, "---");
    EXPECT_EQ(line.find("<script>"), std::string::npos) << line;
    if (line.rfind("| evil", 0) == 0) {
      size_t unescaped = 0;
      for (size_t i = 0; i < line.size(); ++i) unescaped += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
      cells_per_row.push_back(unescaped - 1);
    }
  }
  // The run's rows keep their cells: 9 in the runs table, 8 in the dispersion table.
  EXPECT_EQ(cells_per_row, (std::vector<size_t>{9, 8}));
  EXPECT_NE(md.find("| evil # Injected heading &lt;script&gt;alert(1)&lt;/script&gt;\\|cell"), std::string::npos) << md;
  EXPECT_NE(md.find("- Test CPU, host host ## Machines are mine\n"), std::string::npos) << md;
}

TEST(CsvNeutralise, FormulaCellsBecomeTextAndNumbersStayNumbers) {
  for (const char* formula : {"=1+1", "+1", "-1+1", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", "\tx", "\rx", "=", "-", "-x",
                              "-1e", "-.5", "-1.", "--1"})
    EXPECT_EQ(csv_neutralise(formula), std::string("'") + formula) << formula;
  for (const char* plain : {"", "plain", "resnet50", "0.25", "-0.25", "-1", "-1e-05", "-2.5E+10", "1,2", "a=b"})
    EXPECT_EQ(csv_neutralise(plain), plain) << plain;
}

TEST(CsvNeutralise, AppendedRowsCarryNoFormula) {
  TempDir dir;
  nlohmann::json r = result("=HYPERLINK(\"http://x\",\"y\")");
  r["environment"]["os"]["hostname"] = "@host";
  r["workload"]["options"]["data"] = "-data/path";
  r["summary"]["mean_s"] = -0.5;  // nonsense, but a number: it must stay one
  append_csv(dir / "runs.csv", r);
  std::ifstream in(dir / "runs.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_NE(row.find(",\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","), std::string::npos) << row;
  EXPECT_NE(row.find(",'@host,"), std::string::npos) << row;
  EXPECT_NE(row.find(",'-data/path,"), std::string::npos) << row;
  EXPECT_NE(row.find(",-0.5,"), std::string::npos) << row;
  // No cell (after RFC 4180 quoting is undone) starts with a formula character.
  for (const std::string& line : {header, row}) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
        cells.back() += '"', ++i;
      else if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        cells.emplace_back();
      else
        cells.back() += c;
    }
    EXPECT_EQ(cells.size(), csv_columns().size());
    for (const auto& cell : cells)
      if (!cell.empty() && std::string("=+@\t\r").find(cell[0]) != std::string::npos) ADD_FAILURE() << cell;
  }
}

TEST(ResultTypes, WrongTypeNamesTheFileAndTheField) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r["workload"]["options"]["batch_size"] = "8"; },
       "field 'workload.options.batch_size' must be an integer >= 1, found \"8\" (a string)"},
      {[](auto& r) { r["workload"]["options"]["batch_size"] = nullptr; },
       "field 'workload.options.batch_size' must be an integer >= 1, found null;"},
      {[](auto& r) { r["workload"]["options"]["scale"] = 3; }, "field 'workload.options.scale' must be a string"},
      {[](auto& r) { r["workload"]["options"]["world_size"] = "2"; },
       "field 'workload.options.world_size' must be an integer"},
      {[](auto& r) { r["workload"]["options"]["settings"] = "lr=1"; },
       "field 'workload.options.settings' must be an object"},
      {[](auto& r) { r["workload"]["settings"] = nlohmann::json::array(); },
       "field 'workload.settings' must be an object"},
      {[](auto& r) { r["partial"] = "no"; }, "field 'partial' must be true or false"},
      {[](auto& r) { r["throughput"]["unit"] = 1; }, "field 'throughput.unit' must be a string"},
      {[](auto& r) {
         r["distributed"] = {{"global_samples_per_s", "fast"}};
       },
       "field 'distributed.global_samples_per_s' must be a number"},
      {[](auto& r) {
         r["memory"] = {{"peak_bytes", 10}, {"breakdown", {{"weights", "5"}}}};
       },
       "field 'memory.breakdown.weights' must be a number"},
      {[](auto& r) {
         r["memory"] = {{"cuda_allocator", 1}};
       },
       "field 'memory.cuda_allocator' must be an object"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    nlohmann::json r = result("resnet50");
    c.edit(r);
    const std::string file = write(dir, "edited.json", r);
    // Both `tbd report` (a folder) and `tbd compare` (a file) load through load_results.
    for (const std::string& path : {dir.path().string(), file}) {
      const std::string e = error_of<Error>([&] { load_results(path); });
      EXPECT_NE(e.find(file + ": " + c.message), std::string::npos) << e;
      EXPECT_NE(e.find("correct the field or remove the file"), std::string::npos) << e;
    }
  }
}

// Issue 29: documents accepted silently before, figures computed from nonsense.
TEST(ResultRules, FiguresOutOfRangeAndListsThatDisagreeAreRefused) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r["iterations"] = nlohmann::json::array(); }, "field 'iterations' must be a non-empty array"},
      {[](auto& r) {
         r["iterations"] = {0.0, 0.0};
       },
       "field 'iterations[0]' must be a number > 0, found 0.0"},
      {[](auto& r) { r["throughput"]["samples_per_s"] = -3; },
       "field 'throughput.samples_per_s' must be a number > 0 or null, found -3"},
      {[](auto& r) { r["throughput"]["samples_per_s"] = "NaN"; },
       "field 'throughput.samples_per_s' must be a number > 0 or null, found \"NaN\" (a string)"},
      {[](auto& r) {
         r["iteration_repetitions"] = {0, 0};
       },
       "field 'iteration_repetitions' must be an array of one entry per entry of 'iterations' (4), but it holds 2"},
      {[](auto& r) {
         r["iteration_samples"] = {4, 4, -4, 4};
       },
       "field 'iteration_samples[2]' must be a number >= 0, found -4"},
      {[](auto& r) {
         r["gradients"] = {{"elements", "many"}, {"backward_passes", nlohmann::json::array()}};
       },
       "field 'gradients.elements' must be an array, found \"many\" (a string)"},
      {[](auto& r) {
         r["gradients"] = {{"elements", {10, 20}},
                           {"element_size", {4, 4}},
                           {"kind", {"weight", "bias"}},
                           {"backward_passes", {{{"ready_fraction", {0.5}}}}}};
       },
       "field 'gradients.backward_passes[0].ready_fraction' must be an array of one entry per entry of "
       "'gradients.elements' (2), but it holds 1"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    nlohmann::json r = result("resnet50");
    c.edit(r);
    const std::string file = write(dir, "edited.json", r);
    const std::string e = error_of<Error>([&] { load_results(file); });
    EXPECT_NE(e.find(file + ": " + c.message), std::string::npos) << e;
  }
  // A partial result cut short before its first timed iteration has none, and no throughput.
  TempDir dir;
  nlohmann::json r = result("resnet50");
  r["partial"] = true;
  r["iterations"] = nlohmann::json::array();
  r["throughput"]["samples_per_s"] = nullptr;
  EXPECT_NO_THROW(load_results(write(dir, "partial.json", r)));
}

TEST(ResultTypes, ScaleSweepAndSuiteEntriesAreChecked) {
  TempDir dir;
  const std::string sweep = write(dir, "sweep.json",
                                  {{"schema", "tbd.sweep/1"},
                                   {"workload", "resnet50"},
                                   {"points", {{{"batch_size", 1}, {"status", "ok"}}, {{"batch_size", "2"}}}}});
  EXPECT_NE(
      error_of<Error>([&] { load_results(sweep); }).find(sweep + ": field 'points[1].batch_size' must be an integer"),
      std::string::npos);
  const std::string suite =
      write(dir, "suite.json", {{"schema", "tbd.suite/1"}, {"runs", {{{"workload", "ncf"}, {"status", 0}}}}});
  EXPECT_NE(error_of<Error>([&] { load_results(suite); }).find(suite + ": field 'runs[0].status' must be a string"),
            std::string::npos);
  const std::string scale =
      write(dir, "scale.json", {{"schema", "tbd.scale/1"}, {"points", {{{"nproc", "1"}, {"result", result("r")}}}}});
  EXPECT_NE(error_of<Error>([&] { load_results(scale); }).find(scale + ": field 'points[0].nproc' must be an integer"),
            std::string::npos);
}

TEST(ResultTypes, WellTypedFilesWithoutOptionalFieldsStillLoad) {
  TempDir dir;
  nlohmann::json r = result("resnet50");
  r["workload"].erase("settings");
  r["workload"]["options"].erase("settings");
  r.erase("partial");
  write(dir, "r.json", r);
  const ResultSet set = load_results(dir.path().string());
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(configuration_label(set.runs[0].result), "resnet50 tiny b4 fp32");
  EXPECT_NO_THROW(render_markdown(model_of(dir)));
}

TEST(ResultSet, SymlinkLoopNamesThePath) {
  TempDir dir;
  write(dir, "r.json", result("resnet50"));
  const std::string loop = dir / "loop.json";
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  std::string e = error_of<Error>([&] { load_results(dir.path().string()); });
  EXPECT_NE(e.find(loop + ": a loop of symbolic links"), std::string::npos) << e;
  e = error_of<Error>([&] { load_results(loop); });
  EXPECT_NE(e.find(loop + ": a loop of symbolic links"), std::string::npos) << e;
  EXPECT_EQ(e.find("filesystem error"), std::string::npos) << e;
}

}  // namespace
}  // namespace tbd
