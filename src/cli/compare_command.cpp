// `tbd compare BASE NEW`: significance-tested comparison of two sets of
// results (files or folders). Exit status 1 when a configuration got
// significantly slower beyond --threshold, so CI can gate on it; 2 when the
// inputs cannot be compared.
#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/report/compare.h"

namespace tbd::cli {
namespace {

// "5%", "0.05": a share. A bare number of 1 or more is refused rather than
// guessed at (5 would be 500%).
double parse_threshold(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const auto number = real_from_text(percent ? text.substr(0, text.size() - 1) : text);
  if (!number)
    throw UsageError("--threshold must be a share such as 0.05 or a percentage such as 5%; got '" + text + "'");
  double value = *number;
  if (!std::isfinite(value))
    throw UsageError("--threshold must be a finite share such as 0.05 or a percentage such as 5%; got '" + text + "'");
  if (percent)
    value /= 100;
  else if (value >= 1)
    throw UsageError("--threshold " + text + " would be " + std::to_string(static_cast<int>(value * 100)) +
                     "%; give a share (0.05) or a percentage (" + text + "%)");
  if (!(value >= 0 && value < 1))
    throw UsageError("--threshold must lie in [0, 1) as a share or [0%, 100%) as a percentage; got '" + text + "'");
  return value;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare",
                                 "Compare two sets of results: ratio of time per sample with a CI, "
                                 "Welch's test over repetitions, verdict; exit 1 on a regression");
  struct Args {
    std::string base, candidate, threshold = "5%";
    double alpha = 0.05;
    bool json = false, ab = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("base", a->base, "Result file or folder of the baseline")->required();
  cmd->add_option("new", a->candidate, "Result file or folder to judge against it")->required();
  cmd->add_option("--threshold", a->threshold, "Smallest change that counts: 5% or 0.05")->capture_default_str();
  cmd->add_option("--alpha", a->alpha, "Significance level of the test")->capture_default_str();
  cmd->add_flag("--ab", a->ab,
                "Compare one configuration with another on purpose (e.g. --threads 1 against --threads 2); "
                "each side must hold one configuration");
  cmd->add_flag("--json", a->json, "Print the comparison as JSON (tbd.compare/2) instead of the table");
  cmd->footer(
      "Runs are matched by workload, scale, batch size, precision, device, data kind, settings and\n"
      "world size. The statistical unit is the repetition (--repeat) or, with two or more result\n"
      "files of a configuration on each side, the process. Verdicts: slower, faster, no significant\n"
      "change, or inconclusive (too few units for the noise; the note says how many are needed).\n"
      "Exit status: 0 no regression (inconclusive included), 1 a significant slow-down beyond\n"
      "--threshold, 2 bad usage or inputs that cannot be compared.");
  return {cmd, [a]() {
            const double threshold = parse_threshold(a->threshold);
            if (!(a->alpha > 0 && a->alpha < 1))
              throw UsageError("--alpha must lie in (0, 1), e.g. 0.05; got " + std::to_string(a->alpha));
            ResultSet base, candidate;
            try {
              base = load_results(a->base);
              candidate = load_results(a->candidate);
            } catch (const UsageError&) {
              throw;
            } catch (const Error& e) {  // an unreadable input is no regression: exit 2, not 1
              throw UsageError(e.what());
            }
            const Comparison c = compare_results(base, candidate, {threshold, a->alpha, a->ab}, a->base, a->candidate);
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
