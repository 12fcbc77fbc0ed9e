// SPDX-License-Identifier: Apache-2.0
// `ingero-bench report`: a ReportDoc (report_doc.h) written as Markdown, one self-contained HTML page
// (inline CSS and SVG charts from render/, no script, no network), or JSON (to_json in report_json.h).
// The renderers only format what the ReportDoc holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "reports/documents/report_doc.h"

namespace ingero::reports {

enum class ReportFormat { markdown, html, json };

// "md" (or "markdown"), "html", "json"; empty: from the --out file's extension (.md, .html/.htm, .json).
// Anything else is bad input naming --format.
Result<ReportFormat> parse_report_format(const std::string& format, const std::string& out_path);

std::string render_report_markdown(const ReportDoc& doc);
// Each profiled run's CPU profile as Markdown: a heading, the profile's status, each role's top functions
// (self and inclusive); empty without a section.
std::string render_profiles_markdown(const std::vector<RunProfileSection>& sections);
std::string render_report_html(const ReportDoc& doc);
std::string render_report(const ReportDoc& doc, ReportFormat format);  // json: to_json(doc), indented

struct ReportOptions {
  std::string db;
  std::optional<int64_t> sweep;  // --sweep ID
  std::vector<int64_t> runs;     // --run ID ...; with neither, the last sweep, else every run
  std::string format;            // --format md|html|json (empty: from --out's extension)
  std::string out;               // --out FILE
};

// Checks the flags before any work (format, --out writable and not the DB itself, --sweep with --run),
// reads the DB without writing it, and writes the report atomically. Bad input (exit 2) names the flag.
Status write_report(const ReportOptions& options);

}  // namespace ingero::reports
