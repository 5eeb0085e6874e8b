// `tbd compare BASE NEW`: significance-tested comparison of two sets of
// results (files or folders). Exit status 1 when a configuration got
// significantly slower beyond --threshold, so CI can gate on it.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/report/compare.h"

namespace tbd::cli {

Command add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "Compare two sets of results: ratio of medians with a CI, "
                                            "Mann–Whitney U test, verdict; exit 1 on a regression");
  struct Args {
    std::string base, candidate;
    double threshold = 0.05, alpha = 0.05;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("base", a->base, "Result file or folder of the baseline")->required();
  cmd->add_option("new", a->candidate, "Result file or folder to judge against it")->required();
  cmd->add_option("--threshold", a->threshold, "Smallest change of the median that counts (0.05 = 5%)")
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha, "Significance level of the U test")->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the comparison as JSON (tbd.compare/1) instead of the table");
  cmd->footer(
      "Runs are matched by workload, scale, batch size, precision, device, data kind, settings and\n"
      "world size; runs of one configuration in a folder are pooled. Exit status: 0 no regression,\n"
      "1 a significant slow-down beyond --threshold (or an unreadable input), 2 bad usage.");
  return {cmd, [a]() {
            if (!(a->threshold >= 0 && a->threshold < 1))
              throw UsageError("--threshold must lie in [0, 1), e.g. 0.05 for 5%; got " + std::to_string(a->threshold));
            if (!(a->alpha > 0 && a->alpha < 1))
              throw UsageError("--alpha must lie in (0, 1), e.g. 0.05; got " + std::to_string(a->alpha));
            const ResultSet base = load_results(a->base), candidate = load_results(a->candidate);
            const Comparison c = compare_results(base, candidate, {a->threshold, a->alpha}, a->base, a->candidate);
            for (const auto& w : c.warnings) std::cerr << "tbd: warning: " << w << "\n";
            if (a->json)
              std::cout << to_json(c).dump(2) << "\n";
            else
              print_comparison(std::cout, c);
            if (c.regression()) {
              std::cerr << "tbd: regression: at least one configuration is significantly slower than the base\n";
              return 1;
            }
            return 0;
          }};
}

}  // namespace tbd::cli
