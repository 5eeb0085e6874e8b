// `tbd report --format md`: the report's tables in GitHub-flavoured Markdown.
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "tbd/core/statistics.h"
#include "tbd/report/report_model.h"
#include "tbd/report/report_text.h"

namespace tbd {

std::string markdown_text(const std::string& s) {
  std::string e;
  bool in_break = false;  // a run of line breaks and other control characters becomes one space
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') {
      if (!in_break) e += ' ';
      in_break = true;
      continue;
    }
    in_break = false;
    switch (c) {
      case '|': e += "\\|"; break;  // a table cell delimiter
      case '\\': e += "\\\\"; break;
      case '&': e += "&amp;"; break;
      case '<': e += "&lt;"; break;
      case '>': e += "&gt;"; break;
      default: e += c;
    }
  }
  return e;
}

std::string render_markdown(const ReportModel& m) {
  std::ostringstream out;
  const auto cell = [](const std::string& s) { return markdown_text(s); };
  // A table whose first column is left-aligned and the others right-aligned.
  const auto table = [&](const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
    out << "|";
    for (const auto& h : header) out << " " << cell(h) << " |";
    out << "\n|---|";
    for (size_t i = 1; i < header.size(); ++i) out << "---:|";
    out << "\n";
    for (const auto& row : rows) {
      out << "|";
      for (const auto& c : row) out << " " << cell(c) << " |";
      out << "\n";
    }
  };
  out << "# tbd report: " << cell(m.source) << "\n\n";
  out << "Machines:\n\n";
  for (const auto& e : m.environments) out << "- " << cell(e) << "\n";
  if (m.environments.empty()) out << "- not available: no result file\n";

  if (m.ab) {
    out << "\n## A/B: " << cell(m.ab->new_source) << " against " << cell(m.ab->base_source) << "\n\n";
    if (m.ab->rows.empty())
      out << "Not available: no configuration is in both sets.\n";
    else
      table(ab_table_header(), ab_table_rows(*m.ab));
    for (const auto& w : m.ab->warnings) out << "\nWarning: " << cell(w) << "\n";
    if (!m.ab->only_in_base.empty() || !m.ab->only_in_new.empty())
      out << fmt::format("\nOnly in base: {}. Only in new: {}.\n", m.ab->only_in_base.size(), m.ab->only_in_new.size());
  }

  out << "\n## Runs\n\n";
  if (m.runs.empty()) {
    out << "Not available: no result files (only " << (m.scales.empty() ? "indexes" : "scaling files") << ").\n";
  } else {
    out << "| configuration | throughput | 95% CI | median iteration | CV | CPU util. | FLOP/s of peak | peak memory | "
           "file |\n"
        << "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& r : m.runs)
      out << fmt::format("| {}{} | {} {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(r.label),
                         r.partial ? " (partial)" : "", format_number(r.throughput), cell(r.unit),
                         std::isfinite(r.ci_low) ? "[" + format_number(r.ci_low) + ", " + format_number(r.ci_high) + "]"
                                                 : std::string("-"),
                         format_ms(r.median_s), format_percent(r.cv), format_percent(r.cpu), format_percent(r.flops),
                         format_bytes(r.peak_bytes), cell(r.file));
  }

  out << "\n## Findings\n\n";
  bool any_findings = false;
  for (const auto& r : m.runs) {
    if (r.findings.empty()) continue;
    out << "### " << cell(r.label) << "\n\n";
    for (const auto& f : r.findings) out << "- " << cell(f) << "\n";
    out << "\n";
    any_findings = true;
  }
  if (!any_findings) out << "Not available: no result carries the figures findings are computed from.\n";
  if (!m.not_run.empty()) {
    out << "\n## Failed, out-of-memory and skipped runs\n\n| run | status | error | recorded in |\n|---|---|---|---|\n";
    for (const auto& n : m.not_run)
      out << fmt::format("| {} | {} | {} | {} |\n", cell(n.what), cell(n.status), cell(n.error), cell(n.file));
  }

  out << "\n## Throughput and utilisation against batch size\n\n";
  if (m.sweeps.empty()) out << "Not available: " << kNoSweepReason << ".\n";
  for (const auto& s : m.sweeps) {
    out << "### " << cell(s.label) << "\n\n| batch | throughput (" << cell(s.unit)
        << ") | CPU util. | FLOP/s of peak | peak memory |\n|---:|---:|---:|---:|---:|\n";
    for (const auto& p : s.points)
      out << fmt::format("| {} | {} | {} | {} | {} |\n", p.batch, format_number(p.throughput), format_percent(p.cpu),
                         format_percent(p.flops), format_bytes(p.peak_bytes));
    out << "\n";
  }
  for (const auto& s : m.sweep_files) {
    out << fmt::format("Sweep {} ({}): largest batch size that fits: {}{}.\n\n", cell(s.workload), cell(s.file),
                       s.largest_fit > 0 ? std::to_string(s.largest_fit) : "none",
                       s.stopped_by.empty() ? "" : "; stopped: " + cell(s.stopped_by));
  }

  out << "\n## GPU: FLOP/s, utilisation, kernels and the caching allocator\n\n";
  if (const auto rows = gpu_table_rows(m); rows.empty()) {
    out << "Not available: " << kNoGpuReason << ".\n";
  } else {
    table(gpu_table_header(), rows);
  }

  out << "\n## Memory at the peak, by category\n\n";
  bool any_memory = false;
  for (const auto& r : m.runs) any_memory |= !r.memory.empty();
  if (!any_memory) {
    out << "Not available: " << kNoMemoryReason << ".\n";
  } else {
    out << "| configuration | peak |";
    for (const auto& c : memory_categories()) out << " " << c << " |";
    out << "\n|---|---:|";
    for (size_t i = 0; i < memory_categories().size(); ++i) out << "---:|";
    out << "\n";
    for (const auto& r : m.runs) {
      if (r.memory.empty()) continue;
      out << "| " << cell(r.label) << " | " << format_bytes(r.peak_bytes) << " |";
      for (const auto& [c, bytes] : r.memory) out << " " << format_bytes(bytes) << " |";
      out << "\n";
    }
  }

  out << "\n## Memory over an iteration\n\n";
  bool any_timeline = false;
  for (const auto& r : m.runs) {
    const auto& t = r.memory_timeline;
    if (t.t_s.size() < 2) continue;
    size_t at = 0;
    double peak = -1;
    for (size_t i = 0; i < t.t_s.size(); ++i) {
      double live = 0;
      for (const auto& c : t.bytes) live += c[i];
      if (live > peak) peak = live, at = i;
    }
    if (!any_timeline)
      out << "| configuration | points | span | highest recorded point | at |\n|---|---:|---:|---:|---:|\n";
    out << fmt::format("| {} | {} | {} | {} | {} |\n", cell(r.label), t.t_s.size(),
                       format_ms(t.t_s.back() - t.t_s.front()), format_bytes(static_cast<long long>(peak)),
                       format_ms(t.t_s[at] - t.t_s.front()));
    any_timeline = true;
  }
  if (!any_timeline)
    out << "Not available: " << kNoMemoryReason << ".\n";
  else
    out << "\nThe HTML report (--format html) charts each timeline by category.\n";

  out << "\n## Where an iteration's time goes (ms per timed iteration)\n\n";
  bool any_phases = false;
  for (const auto& r : m.runs) any_phases |= !r.phases_ms.empty();
  if (!any_phases) {
    out << "Not available: " << kNoPhasesReason << ".\n";
  } else {
    out << "| configuration |";
    for (const auto& p : report_phases()) out << " " << p << " |";
    out << " iteration |\n|---|";
    for (size_t i = 0; i <= report_phases().size(); ++i) out << "---:|";
    out << "\n";
    for (const auto& r : m.runs) {
      if (r.phases_ms.empty()) continue;
      out << "| " << cell(r.label) << " |";
      double total = 0;
      for (const auto& [p, ms] : r.phases_ms) out << " " << format_ms(ms / 1e3) << " |", total += ms;
      out << " " << format_ms(total / 1e3) << " |\n";
    }
  }

  out << "\n## Roofline: what bounds each operator\n\n";
  bool any_roofline = false;
  for (const auto& r : m.runs) any_roofline |= r.roofline.judged;
  if (!any_roofline) {
    out << "Not available: " << kNoRooflineReason << ".\n";
  } else {
    out << "Operator time by the ceiling that bounds it (docs/metrics.md#roofline), and the operator with the most "
           "time above its ceiling.\n\n| configuration | compute-bound | memory-bound | overhead-bound | most headroom "
           "|\n"
           "|---|---:|---:|---:|---|\n";
    for (const auto& r : m.runs) {
      if (!r.roofline.judged) continue;
      const auto& v = r.roofline;
      const double total = v.compute_s + v.memory_s + v.overhead_s;
      const auto share = [&](double s) { return format_percent(total > 0 ? s / total : NAN); };
      out << "| " << cell(r.label) << " | " << share(v.compute_s) << " | " << share(v.memory_s) << " | "
          << share(v.overhead_s) << " | "
          << (v.top_op.empty()
                  ? std::string("-")
                  : cell(v.top_op) + " (" + v.top_bound + "-bound): " + format_ms(v.top_headroom_s) + " per iteration")
          << " |\n";
    }
  }

  out << "\n## Time by operator class (share of operator self time)\n\n";
  bool any_ops = false;
  for (const auto& r : m.runs) any_ops |= !r.op_classes.empty();
  if (!any_ops) {
    out << "Not available: " << kNoOpsReason << ".\n";
  } else {
    std::vector<std::string> classes;
    for (const auto& r : m.runs)
      if (!r.op_classes.empty()) {
        for (const auto& [c, s] : r.op_classes) classes.push_back(c);
        break;
      }
    out << "| configuration |";
    for (const auto& c : classes) out << " " << cell(c) << " |";
    out << "\n|---|";
    for (size_t i = 0; i < classes.size(); ++i) out << "---:|";
    out << "\n";
    for (const auto& r : m.runs) {
      if (r.op_classes.empty()) continue;
      out << "| " << cell(r.label) << " |";
      for (const auto& [c, s] : r.op_classes) out << " " << format_percent(s) << " |";
      out << "\n";
    }
  }

  out << "\n## Time by layer (operator self time, ms per instrumented iteration)\n\n";
  bool any_layers = false;
  for (const auto& r : m.runs)
    if (!r.layers.empty()) {
      any_layers = true;
      out << "### " << cell(r.label) << "\n\n";
      table(layer_table_header(), layer_table_rows(r));
      out << "\n";
    }
  if (!any_layers) out << "Not available: " << kNoLayersReason << ".\n";

  out << "\n## Scaling efficiency against process count\n\n";
  if (m.scales.empty()) out << "Not available: " << kNoScaleReason << ".\n";
  for (const auto& s : m.scales) {
    out << "### " << cell(s.label) << " (" << cell(s.file) << ")\n\n| processes | throughput (" << cell(s.unit)
        << ") | speed-up | efficiency |\n|---:|---:|---:|---:|\n";
    for (const auto& p : s.points)
      out << fmt::format("| {} | {} | {:.3f} | {} |\n", p.nproc, format_number(p.throughput), p.speedup,
                         format_percent(p.efficiency));
    out << "\n";
  }

  out << "\n## Predictions (tbd predict)\n\n";
  if (m.predictions.empty())
    out << "Not available: " << kNoPredictionReason << ".\n";
  else
    table(prediction_table_header(), prediction_table_rows(m));

  out << "\n## Run-to-run dispersion of iteration times\n\n";
  if (m.runs.empty()) {
    out << "Not available: no result files.\n";
  } else {
    out << "Relative to each run's median iteration time.\n\n| configuration | iterations | min | p5 | p95 | max | CV "
           "|\n"
        << "|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : m.runs) {
      if (r.times.empty()) continue;
      const double med = percentile(r.times, 0.5);
      const auto rel = [&](double q) { return format_signed_percent(percentile(r.times, q) / med - 1); };
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", cell(r.label), r.times.size(), rel(0), rel(0.05),
                         rel(0.95), rel(1), format_percent(r.cv));
    }
  }
  if (!m.skipped_files.empty()) {
    out << "\nOther JSON files in the folder (not tbd results, ignored): ";
    for (size_t i = 0; i < m.skipped_files.size(); ++i) out << (i ? ", " : "") << cell(m.skipped_files[i]);
    out << "\n";
  }
  return out.str();
}

}  // namespace tbd
