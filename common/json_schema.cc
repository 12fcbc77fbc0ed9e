// SPDX-License-Identifier: Apache-2.0
#include "common/json_schema.h"

namespace ingero::json_schema {
namespace {

json typed(const char* type, const std::string& description) {
  json schema{{"type", type}};
  if (!description.empty()) schema["description"] = description;
  return schema;
}

}  // namespace

json integer(const std::string& description) { return typed("integer", description); }
json number(const std::string& description) { return typed("number", description); }
json string(const std::string& description) { return typed("string", description); }
json boolean(const std::string& description) { return typed("boolean", description); }

json any(const std::string& description) { return json{{"description", description}}; }

json string_enum(const std::vector<std::string>& values, const std::string& description) {
  json schema = typed("string", description);
  schema["enum"] = values;
  return schema;
}

json nullable(json schema) {
  schema["type"] = json::array({schema["type"], "null"});
  // An enumeration lists every value allowed: null too, or the type's null would still be refused.
  if (schema.contains("enum")) schema["enum"].push_back(nullptr);
  return schema;
}

json array_of(json items, const std::string& description) {
  json schema = typed("array", description);
  schema["items"] = std::move(items);
  return schema;
}

json object(const Properties& properties, const std::string& description) {
  json schema = typed("object", description);
  schema["properties"] = json::object();
  schema["required"] = json::array();
  for (const auto& [name, property] : properties) {
    schema["properties"][name] = property;
    schema["required"].push_back(name);
  }
  return schema;
}

json with_optional(json object_schema, const Properties& properties) {
  for (const auto& [name, property] : properties) object_schema["properties"][name] = property;
  return object_schema;
}

json arguments(const Properties& properties, const std::vector<std::string>& required) {
  json schema = object(properties);
  schema["required"] = required;
  schema["additionalProperties"] = false;
  return schema;
}

}  // namespace ingero::json_schema
