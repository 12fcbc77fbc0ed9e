// SPDX-License-Identifier: Apache-2.0
#include "mcp/schema_check.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ingero::mcp {
namespace {

using nlohmann::json;

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    // JSON Schema counts 3.0 as an integer: the test is the value, not the spelling.
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double x = value.get<double>();
    return std::isfinite(x) && std::floor(x) == x;
  }
  return true;  // an unknown type name constrains nothing
}

std::string with_article(const std::string& type) {
  if (type == "null") return "null";
  const bool vowel = type == "object" || type == "array" || type == "integer";
  return (vowel ? "an " : "a ") + type;
}

std::optional<std::string> check_type(const json& value, const json& type) {
  std::vector<std::string> names;
  if (type.is_string()) names.push_back(type.get<std::string>());
  if (type.is_array()) {
    for (const json& name : type) {
      if (name.is_string()) names.push_back(name.get<std::string>());
    }
  }
  if (names.empty()) return std::nullopt;
  for (const auto& name : names) {
    if (has_type(value, name)) return std::nullopt;
  }
  std::vector<std::string> spelled;
  for (const auto& name : names) spelled.push_back(with_article(name));
  return fmt::format("must be {}", fmt::join(spelled, " or "));
}

std::optional<std::string> check_enum(const json& value, const json& schema) {
  const auto allowed = schema.find("enum");
  if (allowed == schema.end() || !allowed->is_array()) return std::nullopt;
  for (const json& option : *allowed) {
    if (option == value) return std::nullopt;
  }
  std::vector<std::string> options;
  for (const json& option : *allowed) options.push_back(option.dump());
  return fmt::format("must be one of {}", fmt::join(options, ", "));
}

// Code points, not bytes: minLength counts characters.
int64_t utf8_length(const std::string& text) {
  int64_t count = 0;
  for (const unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

std::optional<std::string> check_bounds(const json& value, const json& schema) {
  if (value.is_number()) {
    const double x = value.get<double>();
    const auto min = schema.find("minimum");
    if (min != schema.end() && min->is_number() && x < min->get<double>()) {
      return fmt::format("must be >= {}", min->dump());
    }
    const auto max = schema.find("maximum");
    if (max != schema.end() && max->is_number() && x > max->get<double>()) {
      return fmt::format("must be <= {}", max->dump());
    }
  }
  if (value.is_string()) {
    const auto min = schema.find("minLength");
    if (min != schema.end() && min->is_number_integer() &&
        utf8_length(value.get_ref<const std::string&>()) < min->get<int64_t>()) {
      return fmt::format("must be at least {} character{} long", min->dump(), *min == 1 ? "" : "s");
    }
  }
  return std::nullopt;
}

std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

std::string unknown_key_problem(const json& properties) {
  std::vector<std::string> known;
  for (const auto& [key, ignored] : properties.items()) known.push_back(key);
  if (known.empty()) return "is not allowed (the object takes no properties)";
  return fmt::format("is not allowed (known: {})", fmt::join(known, ", "));
}

std::optional<SchemaViolation> check_value(const json& value, const json& schema, const std::string& path);

std::optional<SchemaViolation> check_object(const json& value, const json& schema, const std::string& path) {
  static const json kNoProperties = json::object();
  const auto found = schema.find("properties");
  const json& properties = found != schema.end() && found->is_object() ? *found : kNoProperties;

  if (auto required = schema.find("required"); required != schema.end() && required->is_array()) {
    for (const json& name : *required) {
      if (name.is_string() && !value.contains(name.get<std::string>())) {
        return SchemaViolation{join_path(path, name.get<std::string>()), "is required"};
      }
    }
  }
  const auto extra = schema.find("additionalProperties");
  const bool closed = extra != schema.end() && *extra == false;
  for (const auto& [key, item] : value.items()) {
    const auto property = properties.find(key);
    if (property != properties.end()) {
      if (auto violation = check_value(item, *property, join_path(path, key))) return violation;
    } else if (closed) {
      return SchemaViolation{join_path(path, key), unknown_key_problem(properties)};
    }
  }
  return std::nullopt;
}

std::optional<SchemaViolation> check_items(const json& value, const json& schema, const std::string& path) {
  const auto items = schema.find("items");
  if (items == schema.end()) return std::nullopt;
  for (size_t i = 0; i < value.size(); ++i) {
    if (auto violation = check_value(value[i], *items, fmt::format("{}[{}]", path, i))) return violation;
  }
  return std::nullopt;
}

std::optional<SchemaViolation> check_value(const json& value, const json& schema, const std::string& path) {
  if (!schema.is_object()) return std::nullopt;  // `true` and other non-object schemas accept anything
  if (auto type = schema.find("type"); type != schema.end()) {
    if (auto problem = check_type(value, *type)) return SchemaViolation{path, *problem};
  }
  if (auto problem = check_enum(value, schema)) return SchemaViolation{path, *problem};
  if (auto problem = check_bounds(value, schema)) return SchemaViolation{path, *problem};
  if (value.is_object()) return check_object(value, schema, path);
  if (value.is_array()) return check_items(value, schema, path);
  return std::nullopt;
}

}  // namespace

std::string SchemaViolation::describe(const std::string& subject, const std::string& whole) const {
  if (path.empty()) return fmt::format("{} {}", whole, problem);
  return fmt::format("{} '{}' {}", subject, path, problem);
}

std::optional<SchemaViolation> check_schema(const json& value, const json& schema) {
  return check_value(value, schema, "");
}

}  // namespace ingero::mcp
