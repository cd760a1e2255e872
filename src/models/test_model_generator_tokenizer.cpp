// Synthetic tokenizers for generated models (see the header).
//
// Merges are learned by plain BPE: count adjacent symbol pairs over the
// pre-tokenized training text, merge the most frequent pair (ties: the
// smallest pair of ids, so the result never depends on hash order), repeat
// until no pair is left. The full merge list is learned once per process
// and each vocabulary takes the prefix that fits its size.
#include "models/test_model_generator_tokenizer.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

namespace kazeia::gen {
namespace {

// ---- GPT-2 byte-to-unicode -------------------------------------------------
// Printable Latin-1 bytes stand for themselves; the other 68 bytes map to
// U+0100 onwards in byte order. Vocabulary order: the printable ones first
// (33..126, 161..172, 174..255), then the remapped ones (0..32, 127..160, 173).

bool byte_is_printable(int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

struct ByteTable {
  uint8_t byte_of_id[256];
  std::string text_of_id[256];
  int id_of_byte[256];
};

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

const ByteTable& byte_table() {
  static const ByteTable table = [] {
    ByteTable t{};
    int id = 0;
    for (int b = 0; b < 256; ++b)
      if (byte_is_printable(b)) t.byte_of_id[id++] = static_cast<uint8_t>(b);
    for (int b = 0; b < 256; ++b)
      if (!byte_is_printable(b)) t.byte_of_id[id++] = static_cast<uint8_t>(b);
    int remapped = 0;
    uint32_t codepoint_of_byte[256];
    for (int b = 0; b < 256; ++b)
      codepoint_of_byte[b] = byte_is_printable(b) ? static_cast<uint32_t>(b) : 256u + remapped++;
    for (int i = 0; i < 256; ++i) {
      append_utf8(t.text_of_id[i], codepoint_of_byte[t.byte_of_id[i]]);
      t.id_of_byte[t.byte_of_id[i]] = i;
    }
    return t;
  }();
  return table;
}

// ---- Pre-tokenization ------------------------------------------------------
// An ASCII approximation of the qwen2 split regex: contractions, letter runs
// with one optional leading non-letter, single digits, punctuation runs with
// an optional leading space, and whitespace (a run before a word leaves its
// last space to the word). Bytes >= 0x80 count as letters. Merges never cross
// these chunks, so they stay plausible for the real pre-tokenizer; exactness
// does not matter, any merge list is a valid vocabulary.

bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_newline(unsigned char c) { return c == '\n' || c == '\r'; }
bool is_punct(unsigned char c) { return !is_letter(c) && !is_digit(c) && !is_space(c); }

size_t contraction_length(std::string_view s, size_t i) {
  if (s[i] != '\'') return 0;
  static constexpr std::string_view kSuffixes[] = {"re", "ve", "ll", "s", "t", "m", "d"};
  for (std::string_view suffix : kSuffixes) {
    if (i + 1 + suffix.size() > s.size()) continue;
    bool match = true;
    for (size_t k = 0; k < suffix.size(); ++k)
      match = match && (s[i + 1 + k] | 0x20) == suffix[k];
    if (match) return 1 + suffix.size();
  }
  return 0;
}

std::vector<std::string_view> pre_tokenize(std::string_view s) {
  std::vector<std::string_view> chunks;
  size_t i = 0;
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    size_t j = i;
    if (size_t n = contraction_length(s, i); n > 0) {
      j = i + n;
    } else if (is_letter(at(i)) || (!is_newline(at(i)) && !is_digit(at(i)) && i + 1 < s.size() && is_letter(at(i + 1)))) {
      j = i + 1;
      while (j < s.size() && is_letter(at(j))) ++j;
    } else if (is_digit(at(i))) {
      j = i + 1;
    } else if (is_punct(at(i)) || (at(i) == ' ' && i + 1 < s.size() && is_punct(at(i + 1)))) {
      j = at(i) == ' ' ? i + 1 : i;
      while (j < s.size() && is_punct(at(j))) ++j;
      while (j < s.size() && is_newline(at(j))) ++j;
    } else {  // whitespace
      while (j < s.size() && is_space(at(j))) ++j;
      size_t last_newline = std::string_view::npos;
      for (size_t k = i; k < j; ++k)
        if (is_newline(at(k))) last_newline = k;
      if (last_newline != std::string_view::npos) {
        j = last_newline + 1;
      } else if (j < s.size() && j - i > 1) {
        j -= 1;  // the last space belongs to the next word
      }
    }
    chunks.push_back(s.substr(i, j - i));
    i = j;
  }
  return chunks;
}

// ---- BPE learning ----------------------------------------------------------

struct Word {
  std::vector<int> symbols;
  int64_t count = 0;
};

struct Merge {
  int left = 0, right = 0, result = 0;
};

struct LearnedVocab {
  std::vector<std::string> texts;  // texts of all symbols; the first n_base are the alphabet
  size_t n_base = 0;
  std::vector<Merge> merges;       // in rank order; result may be an older token
};

// Learns merges over words until every word is one symbol (like a BPE
// trainer asked for a large vocabulary: the late merges, of pairs seen once,
// make whole words tokens). texts holds the base alphabet on entry and gains
// one entry per new token.
void learn_merges(std::vector<Word> words, LearnedVocab& vocab) {
  std::unordered_map<std::string, int> id_of_text;
  for (size_t i = 0; i < vocab.texts.size(); ++i) id_of_text.emplace(vocab.texts[i], static_cast<int>(i));
  const auto pair_key = [](int a, int b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); };
  for (;;) {
    std::unordered_map<uint64_t, int64_t> counts;
    for (const Word& w : words)
      for (size_t i = 0; i + 1 < w.symbols.size(); ++i) counts[pair_key(w.symbols[i], w.symbols[i + 1])] += w.count;
    if (counts.empty()) break;
    uint64_t best = 0;
    int64_t best_count = 0;
    for (const auto& [key, count] : counts)
      if (count > best_count || (count == best_count && key < best)) {
        best = key;
        best_count = count;
      }
    Merge m;
    m.left = static_cast<int>(best >> 32);
    m.right = static_cast<int>(best & 0xFFFFFFFFu);
    std::string text = vocab.texts[m.left] + vocab.texts[m.right];
    auto [it, inserted] = id_of_text.emplace(text, static_cast<int>(vocab.texts.size()));
    if (inserted) vocab.texts.push_back(std::move(text));
    m.result = it->second;
    vocab.merges.push_back(m);
    for (Word& w : words) {
      std::vector<int> merged;
      merged.reserve(w.symbols.size());
      for (size_t i = 0; i < w.symbols.size(); ++i) {
        if (i + 1 < w.symbols.size() && w.symbols[i] == m.left && w.symbols[i + 1] == m.right) {
          merged.push_back(m.result);
          ++i;
        } else {
          merged.push_back(w.symbols[i]);
        }
      }
      w.symbols = std::move(merged);
    }
  }
}

// Groups equal chunks so each distinct word is counted once.
std::vector<Word> count_words(const std::vector<std::vector<int>>& sequences) {
  std::map<std::vector<int>, int64_t> counts;
  for (const auto& s : sequences) counts[s] += 1;
  std::vector<Word> words;
  for (const auto& [symbols, count] : counts) words.push_back({symbols, count});
  return words;
}

const LearnedVocab& learned_byte_vocab() {
  static const LearnedVocab vocab = [] {
    LearnedVocab v;
    const ByteTable& bt = byte_table();
    for (int i = 0; i < 256; ++i) v.texts.push_back(bt.text_of_id[i]);
    v.n_base = 256;
    std::vector<std::vector<int>> sequences;
    for (std::string_view chunk : pre_tokenize(tokenizer_training_text())) {
      std::vector<int> s;
      for (char c : chunk) s.push_back(bt.id_of_byte[static_cast<unsigned char>(c)]);
      sequences.push_back(std::move(s));
    }
    learn_merges(count_words(sequences), v);
    return v;
  }();
  return vocab;
}

// SentencePiece style: whitespace-separated words, each prefixed with U+2581,
// split into UTF-8 characters. The alphabet is ordered by frequency.
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581

const LearnedVocab& learned_piece_vocab() {
  static const LearnedVocab vocab = [] {
    std::vector<std::vector<std::string>> words;
    std::string_view text = tokenizer_training_text();
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && is_space(static_cast<unsigned char>(text[i]))) ++i;
      if (i >= text.size()) break;
      std::vector<std::string> chars{std::string(kSpaceMark)};
      while (i < text.size() && !is_space(static_cast<unsigned char>(text[i]))) {
        size_t len = 1;
        while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
        chars.emplace_back(text.substr(i, len));
        i += len;
      }
      words.push_back(std::move(chars));
    }
    std::map<std::string, int64_t> char_counts;
    for (const auto& w : words)
      for (const auto& c : w) char_counts[c] += 1;
    std::vector<std::pair<std::string, int64_t>> alphabet(char_counts.begin(), char_counts.end());
    std::stable_sort(alphabet.begin(), alphabet.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    LearnedVocab v;
    std::map<std::string, int> id_of_char;
    for (const auto& [c, count] : alphabet) {
      id_of_char[c] = static_cast<int>(v.texts.size());
      v.texts.push_back(c);
    }
    v.n_base = v.texts.size();
    std::vector<std::vector<int>> sequences;
    for (const auto& w : words) {
      std::vector<int> s;
      for (const auto& c : w) s.push_back(id_of_char[c]);
      sequences.push_back(std::move(s));
    }
    learn_merges(count_words(sequences), v);
    return v;
  }();
  return vocab;
}

// The merges whose results fit in `budget` new tokens (a merge that re-creates
// an existing token costs nothing). Returns how many merges to keep.
size_t merges_within_budget(const LearnedVocab& v, size_t budget) {
  size_t kept = 0;
  for (const Merge& m : v.merges) {
    if (static_cast<size_t>(m.result) >= v.n_base + budget) break;
    ++kept;
  }
  return kept;
}

gguf::Value string_array(std::vector<std::string> items) {
  gguf::Array a;
  a.element_type = gguf::ValueType::kString;
  a.items.reserve(items.size());
  for (auto& s : items) a.items.emplace_back(std::move(s));
  return gguf::Value(std::move(a));
}

gguf::Value int32_array(const std::vector<TokenType>& types) {
  gguf::Array a;
  a.element_type = gguf::ValueType::kInt32;
  a.items.reserve(types.size());
  for (TokenType t : types) a.items.emplace_back(static_cast<int32_t>(t));
  return gguf::Value(std::move(a));
}

gguf::Value float_array(const std::vector<float>& values) {
  gguf::Array a;
  a.element_type = gguf::ValueType::kFloat32;
  a.items.reserve(values.size());
  for (float f : values) a.items.emplace_back(f);
  return gguf::Value(std::move(a));
}

// The special tokens of the Qwen vocabularies, in Qwen's relative order.
struct SpecialToken {
  std::string_view text;
  TokenType type;
};
constexpr SpecialToken kQwenSpecials[] = {
    {"<|endoftext|>", TokenType::kControl},       {"<|im_start|>", TokenType::kControl},
    {"<|im_end|>", TokenType::kControl},          {"<tool_call>", TokenType::kUserDefined},
    {"</tool_call>", TokenType::kUserDefined},    {"<tool_response>", TokenType::kUserDefined},
    {"</tool_response>", TokenType::kUserDefined}, {"<think>", TokenType::kUserDefined},
    {"</think>", TokenType::kUserDefined},
};
constexpr uint32_t kNumQwenSpecials = sizeof(kQwenSpecials) / sizeof(kQwenSpecials[0]);

constexpr std::string_view kChatTemplate =
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "{{- '<|im_start|>assistant\\n' -}}\n"
    "{%- if enable_thinking is defined and enable_thinking is false -%}\n"
    "{{- '<think>\\n\\n</think>\\n\\n' -}}\n"
    "{%- endif -%}\n"
    "{%- endif -%}\n";

}  // namespace

std::string byte_token_text(int id) { return byte_table().text_of_id[id & 0xFF]; }
uint8_t byte_token_value(int id) { return byte_table().byte_of_id[id & 0xFF]; }
std::string_view synthetic_chat_template() { return kChatTemplate; }

Result<TokenizerKeys> make_byte_bpe_tokenizer(uint32_t n_vocab, std::string_view pre) {
  const uint32_t minimum = 256 + kNumQwenSpecials;
  if (n_vocab < minimum)
    return InvalidArgument("byte-level BPE vocabulary of " + std::to_string(n_vocab) +
                           " tokens: need at least " + std::to_string(minimum) +
                           " (256 bytes + " + std::to_string(kNumQwenSpecials) + " special tokens)");
  const LearnedVocab& v = learned_byte_vocab();
  const size_t n_merges = merges_within_budget(v, n_vocab - minimum);
  size_t n_learned = 256;  // tokens before the special ones
  for (size_t r = 0; r < n_merges; ++r) n_learned = std::max(n_learned, static_cast<size_t>(v.merges[r].result) + 1);

  std::vector<std::string> tokens(v.texts.begin(), v.texts.begin() + static_cast<std::ptrdiff_t>(n_learned));
  std::vector<TokenType> types(n_learned, TokenType::kNormal);
  const auto first_special = static_cast<uint32_t>(n_learned);
  for (const SpecialToken& s : kQwenSpecials) {
    tokens.emplace_back(s.text);
    types.push_back(s.type);
  }
  // Padding as in the real Qwen vocabularies: unused tokens up to the size.
  while (tokens.size() < n_vocab) {
    tokens.push_back("[PAD" + std::to_string(tokens.size()) + "]");
    types.push_back(TokenType::kUnused);
  }
  std::vector<std::string> merges;
  merges.reserve(n_merges);
  for (size_t r = 0; r < n_merges; ++r) merges.push_back(v.texts[v.merges[r].left] + " " + v.texts[v.merges[r].right]);

  const uint32_t endoftext = first_special, im_end = first_special + 2;
  TokenizerKeys out;
  out.n_vocab = n_vocab;
  auto& k = out.keys;
  k.push_back({"tokenizer.ggml.model", gguf::Value(std::string("gpt2"))});
  k.push_back({"tokenizer.ggml.pre", gguf::Value(std::string(pre))});
  k.push_back({"tokenizer.ggml.tokens", string_array(std::move(tokens))});
  k.push_back({"tokenizer.ggml.token_type", int32_array(types)});
  k.push_back({"tokenizer.ggml.merges", string_array(std::move(merges))});
  k.push_back({"tokenizer.ggml.bos_token_id", gguf::Value(endoftext)});
  k.push_back({"tokenizer.ggml.eos_token_id", gguf::Value(im_end)});
  k.push_back({"tokenizer.ggml.padding_token_id", gguf::Value(endoftext)});
  k.push_back({"tokenizer.ggml.add_bos_token", gguf::Value(false)});
  k.push_back({"tokenizer.chat_template", gguf::Value(std::string(kChatTemplate))});
  return out;
}

Result<TokenizerKeys> make_sentencepiece_tokenizer(uint32_t n_vocab) {
  constexpr uint32_t kFixed = 3 + 256;  // <unk> <s> </s> + byte tokens
  if (n_vocab < kFixed + 1)
    return InvalidArgument("SentencePiece vocabulary of " + std::to_string(n_vocab) + " tokens: need at least " +
                           std::to_string(kFixed + 1));
  const LearnedVocab& v = learned_piece_vocab();
  // Pieces come in score order: merged pieces (best first), then the single
  // characters, as sentencepiece's BPE trainer lays them out. Small
  // vocabularies keep the characters first and drop merges.
  const size_t room = n_vocab - kFixed;
  const size_t n_chars = std::min(v.n_base, room);
  const size_t n_merges = merges_within_budget(v, room - n_chars);
  size_t n_pieces_merged = 0;
  for (size_t r = 0; r < n_merges; ++r)
    n_pieces_merged = std::max(n_pieces_merged, static_cast<size_t>(v.merges[r].result) + 1 - v.n_base);

  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<TokenType> types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  std::vector<float> scores(3, 0.0f);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    types.push_back(TokenType::kByte);
    scores.push_back(0.0f);
  }
  float score = 0.0f;
  for (size_t p = 0; p < n_pieces_merged; ++p) {
    tokens.push_back(v.texts[v.n_base + p]);
    types.push_back(TokenType::kNormal);
    scores.push_back(score);
    score -= 1.0f;
  }
  for (size_t c = 0; c < n_chars; ++c) {
    tokens.push_back(v.texts[c]);
    types.push_back(TokenType::kNormal);
    scores.push_back(score);
    score -= 1.0f;
  }
  while (tokens.size() < n_vocab) {
    tokens.push_back("[PAD" + std::to_string(tokens.size()) + "]");
    types.push_back(TokenType::kUnused);
    scores.push_back(score);
    score -= 1.0f;
  }

  TokenizerKeys out;
  out.n_vocab = n_vocab;
  auto& k = out.keys;
  // Key order and types as in llama2.c conversions (stories260K.gguf). No
  // padding / separator ids: theirs are 0xFFFFFFFF, which llama.cpp warns about.
  k.push_back({"tokenizer.ggml.tokens", string_array(std::move(tokens))});
  k.push_back({"tokenizer.ggml.scores", float_array(scores)});
  k.push_back({"tokenizer.ggml.token_type", int32_array(types)});
  k.push_back({"tokenizer.ggml.model", gguf::Value(std::string("llama"))});
  k.push_back({"tokenizer.ggml.unknown_token_id", gguf::Value(uint32_t{0})});
  k.push_back({"tokenizer.ggml.bos_token_id", gguf::Value(uint32_t{1})});
  k.push_back({"tokenizer.ggml.eos_token_id", gguf::Value(uint32_t{2})});
  return out;
}

Result<TokenizerKeys> copy_tokenizer(const std::string& path) {
  auto file = gguf::File::open(path);
  if (!file.ok()) return file.status().with_context("--tokenizer-from");
  TokenizerKeys out;
  for (const gguf::KeyValue& kv : file->metadata())
    if (kv.key.starts_with("tokenizer.")) out.keys.push_back(kv);
  const gguf::Value* tokens = file->find("tokenizer.ggml.tokens");
  const gguf::Array* array = tokens ? tokens->as_array() : nullptr;
  if (array == nullptr || array->element_type != gguf::ValueType::kString || array->items.empty())
    return InvalidFile("--tokenizer-from '" + path + "': no tokenizer.ggml.tokens array of strings");
  if (array->items.size() > UINT32_MAX) return InvalidFile("--tokenizer-from '" + path + "': vocabulary too large");
  out.n_vocab = static_cast<uint32_t>(array->items.size());
  return out;
}

}  // namespace kazeia::gen
