// `tbd report DIR [--format md|html] [--out FILE]`: tables and charts over a
// folder of results (suite, sweep and scale folders, or loose result files).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/report/report_model.h"
#include "tbd/report/result_file.h"
#include "tbd/report/result_set.h"

namespace tbd::cli {

Command add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Markdown or self-contained HTML report (tables and charts) "
                                           "of a folder of results");
  struct Args {
    std::string source, format = "md", out;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("source", a->source, "Folder (searched recursively) or result file")->required();
  cmd->add_option("--format", a->format, "md (Markdown) or html (one file with inlined charts, opens offline)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Write the report to this file (default: standard output)");
  cmd->footer("Sections: runs; failed/out-of-memory runs; throughput, utilisation and memory against batch size;\n"
              "memory breakdown; time by operator class; scaling efficiency; iteration-time dispersion.\n"
              "A section without data says why it is not available.");
  return {cmd, [a]() {
            if (a->format != "md" && a->format != "html")
              throw UsageError("--format must be md or html, got '" + a->format + "'");
            if (!a->out.empty()) check_output_path(a->out);
            const ResultSet set = load_results(a->source);
            const ReportModel model = build_report_model(set, a->source);
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
