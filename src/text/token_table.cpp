#include "text/token_table.h"

#include <functional>

namespace kazeia::text {

bool TokenLookup::build(const StringTable& texts, std::pair<int32_t, int32_t>* duplicate) {
  texts_ = &texts;
  // Load factor <= 1/2: linear probing stays short.
  size_t capacity = 16;
  while (capacity < 2 * texts.size()) capacity *= 2;
  slots_.assign(capacity, kAbsent);
  mask_ = capacity - 1;
  bool unique = true;
  for (size_t id = 0; id < texts.size(); ++id) {
    const std::string_view text = texts[id];
    size_t i = std::hash<std::string_view>{}(text) & mask_;
    while (slots_[i] != kAbsent && texts[static_cast<size_t>(slots_[i])] != text) i = (i + 1) & mask_;
    if (slots_[i] != kAbsent) {
      if (unique && duplicate != nullptr) *duplicate = {slots_[i], static_cast<int32_t>(id)};
      unique = false;
      continue;
    }
    slots_[i] = static_cast<int32_t>(id);
  }
  return unique;
}

int32_t TokenLookup::find(std::string_view text) const {
  if (texts_ == nullptr) return kAbsent;
  size_t i = std::hash<std::string_view>{}(text) & mask_;
  while (slots_[i] != kAbsent) {
    if ((*texts_)[static_cast<size_t>(slots_[i])] == text) return slots_[i];
    i = (i + 1) & mask_;
  }
  return kAbsent;
}

}  // namespace kazeia::text
