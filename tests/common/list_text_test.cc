// SPDX-License-Identifier: Apache-2.0
// The one list splitter and digits parser the flag, override and /proc readers share.
#include <gtest/gtest.h>

#include "common/list_text.h"

namespace ingero {
namespace {

TEST(ListText, SplitsAtEveryCommaKeepingEmptyItems) {
  EXPECT_EQ(split_list("0,2,4"), (std::vector<std::string>{"0", "2", "4"}));
  EXPECT_EQ(split_list("auto"), (std::vector<std::string>{"auto"}));
  EXPECT_EQ(split_list(""), (std::vector<std::string>{""}));
  EXPECT_EQ(split_list("1,,2,"), (std::vector<std::string>{"1", "", "2", ""}));
}

TEST(ListText, DigitsOnlyWithinTheirBound) {
  EXPECT_EQ(parse_digits("12"), 12u);
  EXPECT_EQ(parse_digits("0"), 0u);
  EXPECT_EQ(parse_digits("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_digits("18446744073709551616"), std::nullopt);  // past 64 bits
  EXPECT_EQ(parse_digits("1024", 1024), 1024u);
  EXPECT_EQ(parse_digits("1025", 1024), std::nullopt);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1k", "0x10", "1.5"})
    EXPECT_EQ(parse_digits(bad), std::nullopt) << "'" << bad << "'";
}

}  // namespace
}  // namespace ingero
