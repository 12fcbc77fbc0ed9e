// SPDX-License-Identifier: Apache-2.0
#include "reports/render/html_page.h"

#include <algorithm>

#include "reports/render/svg.h"

namespace ingero::reports::render {
namespace {

// Light, readable, and plain on paper. Colours match the charts' ink and muted greys.
constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f7f7f7; color: #1a1a1a;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 20px 48px; }
header { margin-bottom: 20px; }
h1 { font-size: 1.6em; line-height: 1.25; margin: 0 0 4px; }
.subtitle { color: #555; margin: 0; }
h2 { font-size: 1.25em; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d8d8d8; }
h3 { font-size: 1.05em; margin: 22px 0 8px; }
p { margin: 8px 0; max-width: 75ch; }
figure { margin: 16px 0; padding: 8px; background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; margin: 6px 4px 0; }
.table-wrap { overflow-x: auto; margin: 12px 0; }
table { border-collapse: collapse; background: #fff; font-size: 0.92em; }
caption { text-align: left; color: #555; padding: 0 0 4px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
th { background: #efefef; font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 18px; margin: 12px 0; }
dl.kv dt { color: #555; }
dl.kv dd { margin: 0; }
.note { margin: 12px 0; padding: 8px 12px; background: #eef5fb; border-left: 4px solid #0072b2; }
@media print {
  body { background: #fff; font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  figure { border: none; padding: 0; break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  tr { break-inside: avoid; }
}
)css";

bool neutral_cell(const std::string& cell) { return cell.empty() || cell == "—" || cell == "-"; }

std::vector<bool> numeric_columns(const Table& t) {
  if (!t.numeric.empty()) return t.numeric;
  size_t columns = t.header.size();
  for (const auto& row : t.rows) columns = std::max(columns, row.size());
  std::vector<bool> numeric(columns, true);
  std::vector<bool> seen(columns, false);
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (neutral_cell(row[c])) continue;
      seen[c] = true;
      numeric[c] = numeric[c] && looks_numeric(row[c]);
    }
  }
  for (size_t c = 0; c < columns; ++c) numeric[c] = numeric[c] && seen[c];
  return numeric;
}

std::string cell(const char* tag, const std::string& text, bool numeric) {
  std::string out = std::string("<") + tag + (numeric ? " class=\"num\">" : ">");
  out += escape_xml(text);
  out += std::string("</") + tag + ">";
  return out;
}

}  // namespace

bool looks_numeric(const std::string& cell) {
  std::string_view s = cell;
  if (s.rfind("−", 0) == 0) {
    s.remove_prefix(std::string_view("−").size());  // U+2212, the typographic minus
  } else if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    s.remove_prefix(1);
  }
  if (!s.empty() && s[0] == '.') s.remove_prefix(1);
  return !s.empty() && s[0] >= '0' && s[0] <= '9';
}

HtmlPage::HtmlPage(std::string title_, std::string subtitle_)
    : title(std::move(title_)), subtitle(std::move(subtitle_)) {}

void HtmlPage::add_heading(const std::string& text, int level) {
  const std::string tag = "h" + std::to_string(std::clamp(level, 2, 4));
  blocks_.push_back("<" + tag + ">" + escape_xml(text) + "</" + tag + ">");
}

void HtmlPage::add_paragraph(const std::string& text) { blocks_.push_back("<p>" + escape_xml(text) + "</p>"); }

void HtmlPage::add_key_values(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = "<dl class=\"kv\">";
  for (const auto& [key, value] : items) {
    out += "<dt>" + escape_xml(key) + "</dt><dd>" + escape_xml(value) + "</dd>";
  }
  blocks_.push_back(out + "</dl>");
}

void HtmlPage::add_table(const Table& table) {
  const std::vector<bool> numeric = numeric_columns(table);
  auto is_numeric = [&](size_t c) { return c < numeric.size() && numeric[c]; };
  std::string out = "<div class=\"table-wrap\"><table>";
  if (!table.caption.empty()) out += "<caption>" + escape_xml(table.caption) + "</caption>";
  if (!table.header.empty()) {
    out += "<thead><tr>";
    for (size_t c = 0; c < table.header.size(); ++c) out += cell("th", table.header[c], is_numeric(c));
    out += "</tr></thead>";
  }
  out += "<tbody>";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) out += cell("td", row[c], is_numeric(c));
    out += "</tr>\n";
  }
  blocks_.push_back(out + "</tbody></table></div>");
}

void HtmlPage::add_svg(std::string trusted_svg, const std::string& caption) {
  std::string out = "<figure>" + std::move(trusted_svg);
  if (!caption.empty()) out += "<figcaption>" + escape_xml(caption) + "</figcaption>";
  blocks_.push_back(out + "</figure>");
}

void HtmlPage::add_note(const std::string& text) {
  blocks_.push_back("<aside class=\"note\">" + escape_xml(text) + "</aside>");
}

std::string HtmlPage::render() const {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // The browser itself refuses any load from outside the file: the page must stand alone.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  out += "<title>" + escape_xml(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n";
  out += "<header><h1>" + escape_xml(title) + "</h1>";
  if (!subtitle.empty()) out += "<p class=\"subtitle\">" + escape_xml(subtitle) + "</p>";
  out += "</header>\n";
  for (const auto& block : blocks_) out += block + "\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace ingero::reports::render
