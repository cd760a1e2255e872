// StringTable / TokenLookup against std::vector<std::string> and
// std::unordered_map on the same strings.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/token_table.h"

namespace kazeia::text {
namespace {

TEST(StringTable, HoldsEveryStringIncludingEmptyAndBinary) {
  const std::vector<std::string> strings = {"", "a", std::string("\0b\0", 3), "hello world", "", "\xE2\x96\x81x"};
  StringTable t;
  for (const auto& s : strings) t.push_back(s);
  ASSERT_EQ(t.size(), strings.size());
  for (size_t i = 0; i < strings.size(); ++i) EXPECT_EQ(t[i], strings[i]) << i;
}

TEST(TokenLookup, FindsWhatAHashMapFinds) {
  std::mt19937 rng(5);
  std::vector<std::string> strings;
  std::unordered_map<std::string, int32_t> reference;
  StringTable table;
  for (int i = 0; i < 20000; ++i) {
    std::string s(1 + rng() % 12, ' ');
    for (char& c : s) c = static_cast<char>('a' + rng() % 6);  // small alphabet: many near-collisions
    if (reference.count(s)) continue;
    reference.emplace(s, static_cast<int32_t>(strings.size()));
    strings.push_back(s);
    table.push_back(s);
  }
  TokenLookup lookup;
  ASSERT_TRUE(lookup.build(table));
  EXPECT_EQ(lookup.size(), strings.size());
  for (const auto& [s, id] : reference) ASSERT_EQ(lookup.find(s), id) << s;
  for (int i = 0; i < 2000; ++i) {
    std::string probe(1 + rng() % 14, ' ');
    for (char& c : probe) c = static_cast<char>('a' + rng() % 7);
    auto it = reference.find(probe);
    EXPECT_EQ(lookup.find(probe), it == reference.end() ? TokenLookup::kAbsent : it->second) << probe;
  }
  EXPECT_EQ(lookup.find(""), TokenLookup::kAbsent);
}

TEST(TokenLookup, ReportsTheFirstDuplicateAndKeepsTheFirstId) {
  StringTable t;
  for (const char* s : {"x", "y", "z", "y", "x"}) t.push_back(s);
  TokenLookup lookup;
  std::pair<int32_t, int32_t> dup{-1, -1};
  EXPECT_FALSE(lookup.build(t, &dup));
  EXPECT_EQ(dup, (std::pair<int32_t, int32_t>{1, 3}));
  EXPECT_EQ(lookup.find("y"), 1);
  EXPECT_EQ(lookup.find("x"), 0);
}

TEST(TokenLookup, EmptyLookupFindsNothing) {
  TokenLookup lookup;
  EXPECT_EQ(lookup.find("a"), TokenLookup::kAbsent);
  StringTable empty;
  ASSERT_TRUE(lookup.build(empty));
  EXPECT_EQ(lookup.find(""), TokenLookup::kAbsent);
}

}  // namespace
}  // namespace kazeia::text
