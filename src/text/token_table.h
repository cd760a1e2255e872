// Compact storage for a vocabulary's strings (150k-250k short strings).
//
// As std::vector<std::string> plus std::unordered_map<std::string_view,
// int32_t>, a 248k vocabulary took ~26 MB of heap: 32 bytes per string
// object, a separate allocation per long token, ~40 bytes per hash node.
// Here all strings share one buffer (offsets of 8 bytes each) and the lookup
// is an open-addressing table of token ids (4 bytes per slot): ~6 MB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kazeia::text {

// Strings by index, in one buffer. Views stay valid until the next
// push_back / set (which may reallocate).
class StringTable {
 public:
  StringTable() : ends_(1, 0) {}
  void reserve(size_t n, size_t bytes) {
    ends_.reserve(n + 1);
    chars_.reserve(bytes);
  }
  void push_back(std::string_view s) {
    chars_.append(s);
    ends_.push_back(chars_.size());
  }
  size_t size() const { return ends_.size() - 1; }
  std::string_view operator[](size_t i) const {
    return std::string_view(chars_).substr(ends_[i], ends_[i + 1] - ends_[i]);
  }

 private:
  std::string chars_;
  std::vector<size_t> ends_;  // string i = chars_[ends_[i], ends_[i + 1])
};

// Token id by text, over a StringTable that must outlive it and not change.
class TokenLookup {
 public:
  static constexpr int32_t kAbsent = -1;

  // Indexes every string of `texts`. When two strings are equal, the first
  // id is kept and `duplicate` (if given) receives the pair (first, second)
  // of the first duplicate met; returns false then.
  bool build(const StringTable& texts, std::pair<int32_t, int32_t>* duplicate = nullptr);

  int32_t find(std::string_view text) const;
  size_t size() const { return texts_ != nullptr ? texts_->size() : 0; }

 private:
  const StringTable* texts_ = nullptr;
  std::vector<int32_t> slots_;  // token id, or kAbsent
  size_t mask_ = 0;
};

}  // namespace kazeia::text
