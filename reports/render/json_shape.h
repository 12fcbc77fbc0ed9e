// SPDX-License-Identifier: Apache-2.0
// One list of fields for a report object's JSON: each field's name, its schema and how it is read
// from the value. The writer and the schema MCP publishes (mcp/trace_tools) both come from that
// list, so what is sent cannot drift from what is described.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_schema.h"

namespace ingero::reports {

template <class T>
struct JsonField {
  std::string name;
  nlohmann::json schema;
  std::function<nlohmann::json(const T&)> value;
  // Present only sometimes: the value is then written only when it is not discarded
  // (nlohmann::json(nlohmann::json::value_t::discarded)), and the schema does not require it.
  bool optional = false;
};

template <class T>
class JsonShape {
 public:
  JsonShape(std::string description, std::vector<JsonField<T>> fields)
      : description_(std::move(description)), fields_(std::move(fields)) {}

  nlohmann::json write(const T& value) const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& field : fields_) {
      nlohmann::json v = field.value(value);
      if (field.optional && v.is_discarded()) continue;
      out[field.name] = std::move(v);
    }
    return out;
  }

  // Every item of a list, each written as write() writes one.
  nlohmann::json write_all(const std::vector<T>& items) const {
    nlohmann::json out = nlohmann::json::array();
    for (const T& item : items) out.push_back(write(item));
    return out;
  }

  nlohmann::json schema() const { return schema(description_); }

  // The same fields described otherwise: a shape used in several places says what it holds in each.
  nlohmann::json schema(const std::string& description) const {
    json_schema::Properties always, sometimes;
    for (const auto& field : fields_) (field.optional ? sometimes : always).emplace_back(field.name, field.schema);
    return json_schema::with_optional(json_schema::object(always, description), sometimes);
  }

 private:
  std::string description_;
  std::vector<JsonField<T>> fields_;
};

// A field read straight from a data member: member(&RunHeader::label).
template <class T, class M>
std::function<nlohmann::json(const T&)> member(M T::*field) {
  return [field](const T& value) { return nlohmann::json(value.*field); };
}

// A field read from an optional data member: its value, or null when empty.
template <class T, class M>
std::function<nlohmann::json(const T&)> optional_member(std::optional<M> T::*field) {
  return [field](const T& value) {
    const std::optional<M>& v = value.*field;
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
}

// A field that always holds one value, such as a document's name or its version.
template <class T>
JsonField<T> constant(const std::string& name, const std::string& value) {
  return {name, json_schema::string_enum({value}), [value](const T&) { return nlohmann::json(value); }};
}
template <class T>
JsonField<T> constant(const std::string& name, int value) {
  return {name, json_schema::integer(), [value](const T&) { return nlohmann::json(value); }};
}

// The value an optional field leaves out.
inline nlohmann::json absent() { return nlohmann::json(nlohmann::json::value_t::discarded); }

}  // namespace ingero::reports
