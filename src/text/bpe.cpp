#include "text/bpe.h"

#include <algorithm>
#include <optional>

#include "text/tokenizer_vocab.h"
#include "text/unicode_utf8.h"

namespace kazeia::text {

void BpeModel::PairTable::reserve(size_t n) {
  size_t cap = 16;
  shift = 60;
  while (cap < n * 2) {
    cap <<= 1;
    --shift;
  }
  slots.assign(cap, Slot{kEmpty, 0, 0});
  mask = cap - 1;
}

bool BpeModel::PairTable::insert(uint64_t key, int32_t rank, int32_t result) {
  uint64_t i = home(key);
  while (true) {
    Slot& s = slots[i];
    if (s.key == key) return false;
    if (s.key == kEmpty) {
      s = Slot{key, rank, result};
      return true;
    }
    i = (i + 1) & mask;
  }
}

BpeModel BpeModel::build(const TokenLookup& lookup, int32_t n_tokens, const std::vector<std::string>& merges,
                         int32_t fallback_id) {
  BpeModel m;
  m.n_tokens_ = n_tokens;
  m.lookup_ = &lookup;

  // Symbols are named by their alphabet text: a token keeps its id, any other
  // string a merge mentions gets an id past the vocabulary.
  std::unordered_map<std::string, int32_t> extra;
  int32_t next_extra = n_tokens;
  auto symbol = [&](std::string_view mapped) {
    if (const int32_t id = lookup.find(mapped); id != TokenLookup::kAbsent) return id;
    auto [e, inserted] = extra.emplace(std::string(mapped), next_extra);
    if (inserted) {
      ++next_extra;
      ++m.stats_.extra_symbols;
    }
    return e->second;
  };
  for (int b = 0; b < 256; ++b) {
    const std::string mapped = gpt2_encode(std::string(1, static_cast<char>(b)));
    m.byte_symbol_[b] = symbol(mapped);
    const int32_t id = lookup.find(mapped);
    m.byte_token_[b] = id != TokenLookup::kAbsent ? id : fallback_id;
  }

  m.pairs_.reserve(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string_view merge = merges[rank];
    // As llama.cpp: split at the first space after the first character.
    const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string_view::npos;
    const std::string_view left = merge.substr(0, space == std::string_view::npos ? 0 : space);
    const std::string_view right = space == std::string_view::npos ? std::string_view() : merge.substr(space + 1);
    // Parts outside the byte alphabet can never be formed from bytes.
    if (left.empty() || right.empty() || !is_gpt2_text(left) || !is_gpt2_text(right)) {
      ++m.stats_.merges_skipped;
      continue;
    }
    joined.assign(left).append(right);
    const int32_t a = symbol(left);
    const int32_t b = symbol(right);
    const int32_t c = symbol(joined);
    m.pairs_.insert(pair_key(a, b), static_cast<int32_t>(rank), c);
    ++m.stats_.merges_used;
  }
  return m;
}

int32_t BpeModel::find_raw(std::string_view raw) const {
  return lookup_->find(gpt2_encode(raw));  // kAbsent == kNoToken
}

namespace {
// Min-heap order: lowest rank first, then the leftmost pair.
struct CandidateAfter {
  bool operator()(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};
}  // namespace

void BpeModel::try_add(BpeScratch& s, int32_t left) const {
  if (left < 0) return;
  const int32_t right = s.symbols[left].next;
  if (right < 0) return;
  const int32_t a = s.symbols[left].id;
  const int32_t b = s.symbols[right].id;
  const PairTable::Slot* slot = pairs_.find(pair_key(a, b));
  if (!slot) return;
  s.heap.push_back({slot->rank, left, a, b});
  std::push_heap(s.heap.begin(), s.heap.end(), CandidateAfter{});
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out, BpeScratch& s) const {
  const size_t n = word.size();
  if (n == 0) return;
  if (n == 1) {
    const int32_t id = byte_token_[static_cast<uint8_t>(word[0])];
    if (id != kNoToken) out.push_back(id);
    return;
  }
  s.symbols.resize(n);
  s.heap.clear();
  for (size_t i = 0; i < n; ++i) {
    s.symbols[i] = {byte_symbol_[static_cast<uint8_t>(word[i])], static_cast<int32_t>(i) - 1,
                    i + 1 < n ? static_cast<int32_t>(i + 1) : -1, static_cast<uint32_t>(i), 1};
  }
  for (size_t i = 0; i + 1 < n; ++i) try_add(s, static_cast<int32_t>(i));

  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), CandidateAfter{});
    const BpeScratch::Candidate c = s.heap.back();
    s.heap.pop_back();
    BpeScratch::Symbol& left = s.symbols[c.left];
    // Stale if either side changed since the candidate was queued (symbols
    // only grow, so an unchanged id means an unchanged symbol).
    if (left.id != c.left_id || left.next < 0) continue;
    BpeScratch::Symbol& right = s.symbols[left.next];
    if (right.id != c.right_id) continue;
    left.id = pairs_.find(pair_key(c.left_id, c.right_id))->result;
    left.length += right.length;
    left.next = right.next;
    if (right.next >= 0) s.symbols[right.next].prev = c.left;
    right.id = -1;
    try_add(s, left.prev);
    try_add(s, c.left);
  }

  for (int32_t i = 0; i >= 0; i = s.symbols[i].next) {
    const BpeScratch::Symbol& sym = s.symbols[i];
    if (sym.id < n_tokens_) {
      out.push_back(sym.id);
      continue;
    }
    // A merge result that is not a token: fall back to one token per byte.
    for (uint32_t k = 0; k < sym.length; ++k) {
      const int32_t id = byte_token_[static_cast<uint8_t>(word[sym.start + k])];
      if (id != kNoToken) out.push_back(id);
    }
  }
}

}  // namespace kazeia::text
