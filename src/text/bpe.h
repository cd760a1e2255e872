// Byte-level BPE merges (the "gpt2" tokenizer model), on raw bytes.
//
// Vocabularies and merges are written in the GPT-2 byte alphabet; since that
// mapping is a bijection, the model converts them to raw bytes once and then
// merges raw bytes directly. A pre-token starts as one symbol per byte; the
// adjacent pair with the lowest merge rank is merged first (ties: the leftmost
// pair), until no pair has a merge. This is llama.cpp's algorithm, run with a
// priority queue over a linked list of symbols, O(n log n) per pre-token.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/token_table.h"

namespace kazeia::text {

// The vocabulary by token text (as stored): a TokenLookup (token_table.h),
// owned by the tokenizer; the models keep a pointer to it.

// Appends out[start, start + count) to out (a repeated word's tokens).
inline void append_copy(std::vector<int32_t>& out, size_t start, size_t count) {
  // Grow geometrically: reserving the exact size on every call would copy
  // the whole vector each time.
  if (out.capacity() < out.size() + count) out.reserve(std::max(out.size() + count, out.capacity() * 2));
  for (size_t k = 0; k < count; ++k) out.push_back(out[start + k]);  // no reallocation now
}

// Reusable buffers for encode_word (one per encode call; not shared).
struct BpeScratch {
  struct Symbol {
    int32_t id;  // symbol id (a token id when < vocabulary size), -1 once merged away
    int32_t prev;
    int32_t next;
    uint32_t start;  // byte range in the pre-token
    uint32_t length;
  };
  struct Candidate {
    int32_t rank;
    int32_t left;  // symbol index
    int32_t left_id;
    int32_t right_id;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};

class BpeModel {
 public:
  struct Stats {
    size_t merges_used = 0;     // merges whose parts are in the byte alphabet
    size_t merges_skipped = 0;  // malformed or outside the alphabet (can never apply)
    size_t extra_symbols = 0;   // merge parts/results that are not tokens
  };

  // lookup: the vocabulary by its (alphabet) text; it must outlive the model.
  // Tokens outside the alphabet (e.g. special tokens with a literal space)
  // simply cannot be produced by merges. merges: "left right", rank = index.
  // fallback_id is emitted for a byte that has no single-byte token
  // (kNoToken: the byte is dropped, as llama.cpp does).
  static BpeModel build(const TokenLookup& lookup, int32_t n_tokens, const std::vector<std::string>& merges,
                        int32_t fallback_id);

  // Appends the tokens of one pre-token given as raw bytes.
  void encode_word(std::string_view word, std::vector<int32_t>& out, BpeScratch& scratch) const;

  // The token whose raw bytes are exactly `raw`, or -1.
  int32_t find_raw(std::string_view raw) const;
  // The token of a single byte, or the fallback id.
  int32_t byte_token(uint8_t b) const { return byte_token_[b]; }
  const Stats& stats() const { return stats_; }

 private:
  // Open-addressing map (left symbol, right symbol) -> (rank, merged symbol).
  struct PairTable {
    struct Slot {
      uint64_t key;
      int32_t rank;
      int32_t result;
    };
    static constexpr uint64_t kEmpty = ~0ull;
    std::vector<Slot> slots;
    uint64_t mask = 0;
    int shift = 60;  // 64 - log2(capacity): the hash uses the product's top bits
    uint64_t home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift; }
    void reserve(size_t n);
    bool insert(uint64_t key, int32_t rank, int32_t result);  // keeps the first
    const Slot* find(uint64_t key) const {
      uint64_t i = home(key);
      while (true) {
        const Slot& s = slots[i];
        if (s.key == key) return &s;
        if (s.key == kEmpty) return nullptr;
        i = (i + 1) & mask;
      }
    }
  };

  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  void try_add(BpeScratch& s, int32_t left) const;

  int32_t n_tokens_ = 0;
  int32_t byte_symbol_[256] = {};  // symbol of each single byte
  int32_t byte_token_[256] = {};   // token emitted for a stray byte
  PairTable pairs_;
  const TokenLookup* lookup_ = nullptr;
  Stats stats_;
};

}  // namespace kazeia::text
