// `tbd report DIR [NEW] [--format md|html] [--out FILE]`: tables and charts
// over a folder of results (suite, sweep and scale folders, or loose result
// files); with a second folder, the report of it with an A/B view against the first.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/output/result_file.h"
#include "tbd/report/report_model.h"
#include "tbd/report/result_set.h"

namespace tbd::cli {

Command add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report",
                                 "Markdown or self-contained HTML report (tables and charts) "
                                 "of a folder of results");
  struct Args {
    std::string source, second, format = "md", out;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("source", a->source, "Folder (searched recursively) or result file")->required();
  cmd->add_option("new", a->second,
                  "A second folder or file: the report is of it, with an A/B view against the "
                  "first (tbd compare's statistics)");
  cmd->add_option("--format", a->format, "md (Markdown) or html (one file with inlined charts, opens offline)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Write the report to this file (default: standard output)");
  cmd->footer(
      "Sections: A/B (two sources); runs with throughput CIs; findings; failed/out-of-memory runs;\n"
      "throughput, utilisation and memory against batch size; memory breakdown and timeline; phase times;\n"
      "roofline; time by operator class; scaling efficiency with the ideal and predictions; predictions;\n"
      "iteration-time dispersion.\n"
      "A section without data says why it is not available.");
  return {cmd, [a]() {
            if (a->format != "md" && a->format != "html")
              throw UsageError("--format must be md or html, got '" + a->format + "'");
            if (!a->out.empty()) check_output_path(a->out);
            const ResultSet set = load_results(a->source);
            ReportModel model;
            if (a->second.empty()) {
              model = build_report_model(set, a->source);
            } else {
              const ResultSet candidate = load_results(a->second);
              model = build_report_model(candidate, a->second);
              model.ab = build_ab_view(set, candidate, a->source, a->second);
            }
            const std::string text = a->format == "html" ? render_html(model) : render_markdown(model);
            if (a->out.empty()) {
              std::cout << text;
            } else {
              write_file_atomically(a->out, text);
              std::cerr << "wrote " << a->out << " (" << model.runs.size() << " runs)\n";
            }
            return 0;
          }};
}

}  // namespace tbd::cli
