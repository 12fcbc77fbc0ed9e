// SPDX-License-Identifier: Apache-2.0
// A small SVG/XML writer for the HTML report: an element tree that escapes every text and
// attribute value on output, and numbers written without the C locale's influence.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ingero::reports::render {

// Escapes & < > " ' so that the result is safe both as element text and inside a quoted attribute.
std::string escape_xml(std::string_view text);

// A coordinate or length: at most two decimals, trailing zeros dropped, never "-0" and never a
// locale's decimal comma ("12.5", "3", "-0.25").
std::string svg_number(double value);

// Counts code points, not bytes: labels are UTF-8 ("µs", "×", "—").
size_t utf8_length(std::string_view text);

// The first `count` code points of `text`.
std::string utf8_prefix(std::string_view text, size_t count);

class Element {
 public:
  explicit Element(std::string tag);

  Element& attr(std::string_view name, std::string_view value);
  Element& attr(std::string_view name, const char* value) { return attr(name, std::string_view(value)); }
  Element& attr(std::string_view name, const std::string& value) { return attr(name, std::string_view(value)); }
  Element& attr(std::string_view name, double value);
  Element& attr(std::string_view name, int value) { return attr(name, static_cast<double>(value)); }
  Element& text(std::string_view content);  // appended as escaped character data
  Element& add(Element child);
  Element& raw(std::string markup);         // trusted markup, written unchanged

  bool empty() const { return parts_.empty(); }
  std::string str() const;
  void write(std::string& out) const;

 private:
  // Content in document order: escaped text or raw markup, or the index of a child element.
  struct Part {
    std::string markup;
    int child = -1;
  };

  std::string tag_;
  std::vector<std::pair<std::string, std::string>> attrs_;
  std::vector<Part> parts_;
  std::vector<Element> children_;
};

// Shorthands for the shapes the charts use; style is added by the caller.
Element rect(double x, double y, double width, double height, std::string_view fill);
Element line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width = 1);
// anchor: "start", "middle" or "end".
Element text(double x, double y, std::string_view content, std::string_view anchor = "start");
// A <title> child: the browser shows it as a tooltip, screen readers read it.
Element tooltip(std::string_view content);

// Adds the SVG namespace to an <svg> root so that the markup also stands alone as a .svg file.
// Inline SVG in HTML5 needs none, and the report keeps URLs out of its pages.
std::string with_xml_namespace(std::string_view svg);

}  // namespace ingero::reports::render
