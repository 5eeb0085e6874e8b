// `tbd report --format md`: the report's outline (report_outline) in
// GitHub-flavoured Markdown: its sections, text and tables; no charts.
#include <sstream>
#include <variant>

#include "tbd/report/report_model.h"
#include "tbd/report/report_outline.h"

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

namespace {

// A table; each column aligned as the table says (first left, others right by default).
void markdown_table(std::ostream& out, const ReportTable& t) {
  out << "|";
  for (const auto& h : t.header) out << " " << markdown_text(h) << " |";
  out << "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) {
    const char align = i < t.align.size() ? t.align[i] : i == 0 ? 'l' : 'r';
    out << (align == 'r' ? "---:|" : "---|");
  }
  out << "\n";
  for (const auto& row : t.rows) {
    out << "|";
    for (const auto& c : row) out << " " << markdown_text(c) << " |";
    out << "\n";
  }
}

// Each part is a block of lines; blocks are separated by a blank line.
void markdown_part(std::ostream& out, const ReportPart& part) {
  if (const auto* h = std::get_if<ReportSubheading>(&part)) {
    out << "### " << markdown_text(h->text) << "\n";
  } else if (const auto* p = std::get_if<ReportParagraph>(&part)) {
    out << markdown_text(p->text) << "\n";
  } else if (const auto* l = std::get_if<ReportList>(&part)) {
    for (const auto& item : l->items) out << "- " << markdown_text(item) << "\n";
  } else if (const auto* t = std::get_if<ReportTable>(&part)) {
    markdown_table(out, *t);
  } else if (const auto* n = std::get_if<ReportNotAvailable>(&part)) {
    out << "Not available: " << markdown_text(n->reason) << ".\n";
  }  // charts are drawn by the HTML report only
}

}  // namespace

std::string render_markdown(const ReportModel& m) {
  std::ostringstream out;
  out << "# tbd report: " << markdown_text(m.source) << "\n";
  for (const auto& section : report_sections(m)) {
    if (!section.title.empty()) out << "\n## " << markdown_text(section.title) << "\n";
    for (const auto& part : section.parts) {
      if (std::holds_alternative<ReportChart>(part)) continue;
      out << "\n";
      markdown_part(out, part);
    }
  }
  return out.str();
}

}  // namespace tbd
