// SPDX-License-Identifier: Apache-2.0
#include "reports/render/svg.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ingero::reports::render {

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0 at all.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string svg_number(double value) {
  // A non-finite coordinate would make the whole SVG invalid; 0 keeps it drawable.
  if (!std::isfinite(value)) return "0";
  // fmt ignores the global locale unless asked ("L"), so the decimal point is always '.'.
  std::string s = fmt::format("{:.2f}", value);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0" || s.empty()) return "0";
  return s;
}

size_t utf8_length(std::string_view text) {
  size_t count = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  }
  return count;
}

std::string utf8_prefix(std::string_view text, size_t count) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == count) return std::string(text.substr(0, i));
      ++seen;
    }
  }
  return std::string(text);
}

Element::Element(std::string tag) : tag_(std::move(tag)) {}

Element& Element::attr(std::string_view name, std::string_view value) {
  attrs_.emplace_back(std::string(name), escape_xml(value));
  return *this;
}

Element& Element::attr(std::string_view name, double value) {
  attrs_.emplace_back(std::string(name), svg_number(value));
  return *this;
}

Element& Element::text(std::string_view content) {
  parts_.push_back({escape_xml(content), -1});
  return *this;
}

Element& Element::add(Element child) {
  children_.push_back(std::move(child));
  parts_.push_back({std::string(), static_cast<int>(children_.size() - 1)});
  return *this;
}

Element& Element::raw(std::string markup) {
  parts_.push_back({std::move(markup), -1});
  return *this;
}

std::string Element::str() const {
  std::string out;
  write(out);
  return out;
}

void Element::write(std::string& out) const {
  out += '<';
  out += tag_;
  for (const auto& [name, value] : attrs_) {
    out += ' ';
    out += name;
    out += "=\"";
    out += value;
    out += '"';
  }
  if (parts_.empty()) {
    out += "/>";
    return;
  }
  out += '>';
  for (const Part& part : parts_) {
    if (part.child >= 0) {
      children_[static_cast<size_t>(part.child)].write(out);
    } else {
      out += part.markup;
    }
  }
  out += "</";
  out += tag_;
  out += '>';
}

Element rect(double x, double y, double width, double height, std::string_view fill) {
  Element e("rect");
  e.attr("x", x).attr("y", y).attr("width", std::max(0.0, width)).attr("height", std::max(0.0, height));
  e.attr("fill", fill);
  return e;
}

Element line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width) {
  Element e("line");
  e.attr("x1", x1).attr("y1", y1).attr("x2", x2).attr("y2", y2).attr("stroke", stroke);
  if (stroke_width != 1) e.attr("stroke-width", stroke_width);
  return e;
}

Element text(double x, double y, std::string_view content, std::string_view anchor) {
  Element e("text");
  e.attr("x", x).attr("y", y);
  if (anchor != "start") e.attr("text-anchor", anchor);
  e.text(content);
  return e;
}

Element tooltip(std::string_view content) {
  Element e("title");
  e.text(content);
  return e;
}

std::string with_xml_namespace(std::string_view svg) {
  constexpr std::string_view kRoot = "<svg";
  if (svg.substr(0, kRoot.size()) != kRoot) return std::string(svg);
  std::string out(kRoot);
  out += " xmlns=\"http://www.w3.org/2000/svg\"";
  out += svg.substr(kRoot.size());
  return out;
}

}  // namespace ingero::reports::render
