// SPDX-License-Identifier: Apache-2.0
// One self-contained HTML5 page: inline CSS, inline SVG charts, no script and no external reference,
// so that a report opens the same from a laptop's disk, a CI artifact or an air-gapped GPU node.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ingero::reports::render {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string caption;
  // Right-aligned columns. Empty: a column is numeric when every cell that is not empty or "—"
  // starts like a number ("12.3 s", "−4 %", "1,880").
  std::vector<bool> numeric;
};

struct HtmlPage {
  std::string title;
  std::string subtitle;

  HtmlPage() = default;
  explicit HtmlPage(std::string title, std::string subtitle = {});

  // All text is escaped; only add_svg takes markup.
  void add_heading(const std::string& text, int level = 2);  // 2 for a section, 3 for a subsection
  void add_paragraph(const std::string& text);
  void add_key_values(const std::vector<std::pair<std::string, std::string>>& items);
  void add_table(const Table& table);
  void add_svg(std::string trusted_svg, const std::string& caption = {});  // markup from charts.h
  void add_note(const std::string& text);

  std::string render() const;

 private:
  std::vector<std::string> blocks_;
};

// Whether a table cell reads as a number, for right alignment.
bool looks_numeric(const std::string& cell);

}  // namespace ingero::reports::render
