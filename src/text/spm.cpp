#include "text/spm.h"

#include <algorithm>
#include <cstdio>

#include "text/tokenizer_vocab.h"
#include "text/unicode_utf8.h"

namespace kazeia::text {

namespace {
constexpr std::string_view kMark = "\xE2\x96\x81";  // U+2581
}  // namespace

SpmModel SpmModel::build(const TokenLookup& lookup, const StringTable& texts, const std::vector<float>& scores,
                         int32_t fallback_id) {
  SpmModel m;
  m.lookup_ = &lookup;
  m.scores_ = scores;
  m.scores_.resize(lookup.size(), 0.0f);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    int32_t id = m.find(hex);
    // llama.cpp's second choice: the byte itself as a token.
    if (id == kNoToken) id = m.find(std::string(1, static_cast<char>(b)));
    m.byte_token_[b] = id != kNoToken ? id : fallback_id;
  }
  // Can a token join a character and a following U+2581? (Tokens that are
  // not valid UTF-8 could be cut differently: no splitting then.)
  m.splits_words_ = true;
  for (size_t id = 0; id < texts.size(); ++id) {
    const std::string_view text = texts[id];
    if (!is_valid_utf8(text)) {
      m.splits_words_ = false;
      break;
    }
    for (size_t p = text.find(kMark, 1); p != std::string_view::npos; p = text.find(kMark, p + 1)) {
      if (p < kMark.size() || text.substr(p - kMark.size(), kMark.size()) != kMark) {
        m.splits_words_ = false;
        break;
      }
    }
    if (!m.splits_words_) break;
  }
  return m;
}

int32_t SpmModel::find(std::string_view piece) const {
  return lookup_->find(piece);  // kAbsent == kNoToken
}

namespace {
// Max-heap order: highest score first, then the leftmost pair.
struct BigramBefore {
  bool operator()(const SpmScratch::Bigram& a, const SpmScratch::Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};
}  // namespace

void SpmModel::try_add(std::string_view text, SpmScratch& s, int32_t left, int32_t right) const {
  if (left < 0 || right < 0) return;
  const SpmScratch::Symbol& l = s.symbols[left];
  const SpmScratch::Symbol& r = s.symbols[right];
  // Adjacent symbols are adjacent byte ranges, so the pair is one substring.
  const int32_t id = find(text.substr(l.start, l.length + r.length));
  if (id == kNoToken) return;
  s.heap.push_back({scores_[id], left, right, id, l.length + r.length});
  std::push_heap(s.heap.begin(), s.heap.end(), BigramBefore{});
}

void SpmModel::encode(std::string_view text, std::vector<int32_t>& out, SpmScratch& s) const {
  if (!splits_words_) {
    encode_word(text, out, s);
    return;
  }
  // Words start at a U+2581 that follows another character; characters are
  // cut exactly as encode_word cuts them, so the cuts fall between symbols.
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> seen;
  auto emit = [&](std::string_view word) {
    auto it = seen.find(word);
    if (it != seen.end()) {
      const auto [start, count] = it->second;
      append_copy(out, start, count);
      return;
    }
    const size_t start = out.size();
    encode_word(word, out, s);
    seen.emplace(word, std::make_pair(start, out.size() - start));
  };
  size_t word_begin = 0;
  bool prev_is_mark = true;  // no cut before the first character
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min(utf8_lead_length(static_cast<uint8_t>(text[pos])), text.size() - pos);
    const bool is_mark = text.substr(pos, len) == kMark;
    if (is_mark && !prev_is_mark) {
      emit(text.substr(word_begin, pos - word_begin));
      word_begin = pos;
    }
    prev_is_mark = is_mark;
    pos += len;
  }
  if (word_begin < text.size()) emit(text.substr(word_begin));
}

void SpmModel::encode_word(std::string_view text, std::vector<int32_t>& out, SpmScratch& s) const {
  s.symbols.clear();
  s.heap.clear();
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min(utf8_lead_length(static_cast<uint8_t>(text[pos])), text.size() - pos);
    const auto index = static_cast<int32_t>(s.symbols.size());
    s.symbols.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(len), index - 1,
                         pos + len < text.size() ? index + 1 : -1, find(text.substr(pos, len))});
    pos += len;
  }
  if (s.symbols.empty()) return;
  for (int32_t i = 1; i < static_cast<int32_t>(s.symbols.size()); ++i) try_add(text, s, i - 1, i);

  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), BigramBefore{});
    const SpmScratch::Bigram b = s.heap.back();
    s.heap.pop_back();
    SpmScratch::Symbol& l = s.symbols[b.left];
    SpmScratch::Symbol& r = s.symbols[b.right];
    // Stale when either side was merged since (llama.cpp's size check).
    if (l.length == 0 || r.length == 0 || l.length + r.length != b.length) continue;
    l.length += r.length;
    l.token = b.token;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) s.symbols[r.next].prev = b.left;
    try_add(text, s, l.prev, b.left);
    try_add(text, s, b.left, l.next);
  }

  for (int32_t i = 0; i >= 0; i = s.symbols[i].next) {
    const SpmScratch::Symbol& sym = s.symbols[i];
    if (sym.token != kNoToken) {
      out.push_back(sym.token);
      continue;
    }
    // Only single characters can be missing from the vocabulary (every merge
    // result is a token): byte fallback.
    for (uint32_t k = 0; k < sym.length; ++k) {
      const int32_t id = byte_token_[static_cast<uint8_t>(text[sym.start + k])];
      if (id != kNoToken) out.push_back(id);
    }
  }
}

}  // namespace kazeia::text
