// SPDX-License-Identifier: Apache-2.0
// Capped JSON parsing: a value nested 100,000 deep is refused before nlohmann::json builds
// it (copying or printing it would overflow the stack); brackets inside strings do not count.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/json_text.h"

namespace ingero {
namespace {

std::string nested(int depth, char open = '[', char close = ']') {
  return std::string(static_cast<size_t>(depth), open) + std::string(static_cast<size_t>(depth), close);
}

TEST(JsonText, DepthIsCountedOutsideStringsOnly) {
  EXPECT_FALSE(json_nested_deeper_than(nested(3), 3));
  EXPECT_TRUE(json_nested_deeper_than(nested(4), 3));
  EXPECT_TRUE(json_nested_deeper_than(R"({"a": {"b": [{"c": 1}]}})", 3));
  EXPECT_FALSE(json_nested_deeper_than(R"({"a": "[[[[{{{{", "b": "\"[[[["})", 1));
  EXPECT_FALSE(json_nested_deeper_than(R"(["\\", "[[[["])", 1));  // an escaped backslash ends before the quote
  EXPECT_FALSE(json_nested_deeper_than("[]]]]][", 1));             // stray closers never go below 0
}

TEST(JsonText, AValueNestedDeeperThanTheCapIsBadInputNotACrash) {
  const auto started = std::chrono::steady_clock::now();
  const std::string deep = "{\"params\": " + nested(100000) + "}";
  auto parsed = parse_json(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().exit_code, kExitBadInput);
  EXPECT_NE(parsed.error().message.find("deeper than 256 levels"), std::string::npos) << parsed.error().message;
  EXPECT_TRUE(parse_json_or_discarded(deep).is_discarded());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST(JsonText, OrdinaryJsonParsesAndBadJsonSaysWhy) {
  auto at_cap = parse_json(nested(kMaxJsonDepth));
  ASSERT_TRUE(at_cap.ok());
  const nlohmann::json copy = *at_cap;  // copying it is safe
  EXPECT_TRUE(copy.is_array());
  auto record = parse_json(R"({"status": "ok", "epoch_seconds": [0.1, 0.2]})");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ((*record)["status"], "ok");
  auto broken = parse_json("{\"status\": ");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("not valid JSON"), std::string::npos);
  EXPECT_TRUE(parse_json_or_discarded("{").is_discarded());
}

}  // namespace
}  // namespace ingero
