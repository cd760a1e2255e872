#include "text/tokenizer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <unordered_map>

#include "base/log.h"
#include "text/bpe.h"
#include "text/pretokenize.h"
#include "text/spm.h"
#include "text/unicode_utf8.h"

namespace kazeia::text {

namespace {

// Token attributes as llama.cpp keeps them (a type can gain CONTROL or UNUSED
// from the token's text, see apply_text_rules).
enum Attr : uint16_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1 << 0,
  kAttrUnused = 1 << 1,
  kAttrNormal = 1 << 2,
  kAttrControl = 1 << 3,
  kAttrUserDefined = 1 << 4,
  kAttrByte = 1 << 5,
};

uint16_t attr_of(TokenType t) {
  switch (t) {
    case TokenType::kNormal: return kAttrNormal;
    case TokenType::kUnknown: return kAttrUnknown;
    case TokenType::kControl: return kAttrControl;
    case TokenType::kUserDefined: return kAttrUserDefined;
    case TokenType::kUnused: return kAttrUnused;
    case TokenType::kByte: return kAttrByte;
    default: return kAttrUndefined;
  }
}

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Texts by which llama.cpp recognises special tokens the file does not name.
constexpr std::array<std::string_view, 11> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>"};
constexpr std::array<std::string_view, 8> kFimPreTexts = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
    "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"};
constexpr std::array<std::string_view, 8> kFimSufTexts = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
    "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"};
constexpr std::array<std::string_view, 8> kFimMidTexts = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
    "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"};
constexpr std::array<std::string_view, 5> kFimPadTexts = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>",
                                                          "<PAD>", "[PAD]"};
constexpr std::array<std::string_view, 5> kFimRepTexts = {"<|fim_repo|>", "<|repo_name|>",
                                                          "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::array<std::string_view, 1> kFimSepTexts = {"<|file_sep|>"};
constexpr std::array<std::string_view, 22> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~["};

}  // namespace

struct Tokenizer::Impl {
  TokenizerKind kind = TokenizerKind::kBpe;
  std::string pre;
  StringTable texts;
  std::vector<TokenType> types;
  std::vector<uint16_t> attrs;
  StringTable pieces;   // rendered as with render_special
  TokenLookup by_text;  // over texts
  std::vector<int32_t> specials;    // split out of the text first, longest first
  std::vector<int32_t> eog;         // sorted
  std::vector<uint8_t> eog_flag;

  int32_t bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken;
  int32_t unk = kNoToken, pad = kNoToken, sep = kNoToken;
  bool add_bos = false, add_eos = false, add_space_prefix = false;
  bool clean_spaces = false, ignore_merges = false;

  std::unique_ptr<RegexSplitter> splitter;  // BPE
  std::unique_ptr<BpeModel> bpe;
  std::unique_ptr<SpmModel> spm;

  int32_t find(std::string_view text) const { return by_text.find(text); }  // kAbsent == kNoToken
  int32_t size() const { return static_cast<int32_t>(texts.size()); }

  void apply_text_rules();
  void build_pieces();

  struct Fragment {
    int32_t token;  // kNoToken: text
    size_t offset;
    size_t length;
  };
  void partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const;
  void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
};

// The rules llama.cpp applies after loading (llama_vocab::impl::load): find
// EOT / FIM tokens by their text, promote them to CONTROL, mark CONTROL tokens
// named "unused" as UNUSED, and collect the end-of-generation set.
void Tokenizer::Impl::apply_text_rules() {
  auto promote = [&](int32_t id) {
    if (id != kNoToken) attrs[id] |= kAttrControl;
  };
  auto find_first = [&](auto texts_list) {
    for (std::string_view t : texts_list) {
      const int32_t id = find(t);
      if (id != kNoToken) return id;
    }
    return kNoToken;
  };
  if (eot == kNoToken) {
    eot = find_first(kEotTexts);
    promote(eot);
  }
  if (eom == kNoToken) {
    eom = find(std::string_view("<|eom_id|>"));
    promote(eom);
  }
  promote(find_first(kFimPreTexts));
  promote(find_first(kFimSufTexts));
  promote(find_first(kFimMidTexts));
  const int32_t fim_pad = find_first(kFimPadTexts);
  const int32_t fim_rep = find_first(kFimRepTexts);
  const int32_t fim_sep = find_first(kFimSepTexts);
  promote(fim_pad);
  promote(fim_rep);
  promote(fim_sep);

  for (int32_t id = 0; id < size(); ++id) {
    if ((attrs[id] & kAttrControl) && texts[id].find("unused") != std::string_view::npos) {
      attrs[id] |= kAttrUnused;
    }
  }

  std::vector<int32_t> set = {fim_pad, fim_rep, fim_sep, eos, eot, eom};
  for (std::string_view t : kEogTexts) {
    const int32_t id = find(t);
    if (id == kNoToken) continue;
    set.push_back(id);
    promote(id);
  }
  // gpt-oss: these render always (llama.cpp forces USER_DEFINED).
  for (std::string_view t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    const int32_t id = find(t);
    if (id != kNoToken) attrs[id] = kAttrUserDefined;
  }
  set.erase(std::remove(set.begin(), set.end(), kNoToken), set.end());
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  auto has_text = [&](std::string_view t) {
    return std::any_of(set.begin(), set.end(), [&](int32_t id) { return texts[id] == t; });
  };
  auto drop = [&](std::string_view t, uint16_t new_attr) {
    for (auto it = set.begin(); it != set.end(); ++it) {
      if (texts[*it] == t) {
        attrs[*it] = new_attr;
        set.erase(it);
        return;
      }
    }
  };
  // o200k_harmony / solar-open: <|end|> is not the end of generation there.
  if ((has_text("<|return|>") && has_text("<|call|>") && has_text("<|end|>")) ||
      (has_text("<|calls|>") && has_text("<|flush|>") && has_text("<|end|>"))) {
    drop("<|end|>", kAttrUserDefined);
  }
  // gemma4 / paddleocr: </s> is an ordinary token there.
  if (has_text("<|tool_response>") && has_text("</s>")) drop("</s>", kAttrNormal);
  eog = set;
  eog_flag.assign(texts.size(), 0);
  for (int32_t id : eog) eog_flag[id] = 1;
}

void Tokenizer::Impl::build_pieces() {
  size_t bytes = 0;
  for (int32_t id = 0; id < size(); ++id) bytes += texts[id].size();
  pieces.reserve(texts.size(), bytes);
  for (int32_t id = 0; id < size(); ++id) {
    const std::string_view text = texts[id];
    const uint16_t a = attrs[id];
    std::string piece;
    if (a & (kAttrUnknown | kAttrControl | kAttrUserDefined)) {
      piece = std::string(text);
    } else if (a & kAttrNormal) {
      if (kind == TokenizerKind::kBpe) {
        piece = gpt2_decode_lenient(text);
      } else {
        for (size_t pos = 0; pos < text.size();) {
          if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
            piece += ' ';
            pos += kSpaceMark.size();
          } else {
            piece += text[pos++];
          }
        }
      }
    } else if (a & kAttrByte) {
      // "<0xNN>"; anything else is kept as written.
      unsigned value = 0;
      const std::string hex(text.substr(0, 6));
      if (text.size() == 6 && text.starts_with("<0x") && text[5] == '>' &&
          std::sscanf(hex.c_str() + 3, "%2x", &value) == 1) {
        piece.assign(1, static_cast<char>(value));
      } else {
        piece = std::string(text);
      }
    }
    // UNUSED / UNDEFINED: nothing, as llama.cpp.
    pieces.push_back(piece);
  }
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::create(Vocab vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) return InvalidArgument("tokenizer vocabulary is empty");
  if (n > static_cast<size_t>(INT32_MAX)) return InvalidArgument("tokenizer vocabulary too large");
  if (!vocab.types.empty() && vocab.types.size() != n) {
    return InvalidArgument("token_type has " + std::to_string(vocab.types.size()) +
                           " entries, expected one per token (" + std::to_string(n) + ")");
  }
  if (!vocab.scores.empty() && vocab.scores.size() != n) {
    return InvalidArgument("scores has " + std::to_string(vocab.scores.size()) +
                           " entries, expected one per token (" + std::to_string(n) + ")");
  }
  const std::pair<const char*, int32_t> ids[] = {
      {"bos", vocab.bos_id}, {"eos", vocab.eos_id}, {"unknown", vocab.unk_id}, {"padding", vocab.pad_id},
      {"separator", vocab.sep_id}, {"eot", vocab.eot_id}, {"eom", vocab.eom_id}};
  for (const auto& [role, id] : ids) {
    if (id != kNoToken && (id < 0 || static_cast<size_t>(id) >= n)) {
      return InvalidArgument(std::string(role) + " token id " + std::to_string(id) +
                             " is outside the vocabulary (" + std::to_string(n) + " tokens)");
    }
  }

  auto impl = std::make_unique<Impl>();
  Impl& t = *impl;
  t.kind = vocab.kind;
  t.pre = vocab.pre;
  {
    size_t bytes = 0;
    for (const std::string& s : vocab.tokens) bytes += s.size();
    t.texts.reserve(n, bytes);
    for (size_t id = 0; id < n; ++id) {
      // llama.cpp renames empty tokens; an empty special token would match everywhere.
      if (vocab.tokens[id].empty()) {
        t.texts.push_back("[EMPTY_" + std::to_string(id) + "]");
      } else {
        t.texts.push_back(vocab.tokens[id]);
      }
    }
    std::vector<std::string>().swap(vocab.tokens);
  }
  t.types = vocab.types.empty() ? std::vector<TokenType>(n, TokenType::kNormal) : std::move(vocab.types);
  if (std::pair<int32_t, int32_t> dup; !t.by_text.build(t.texts, &dup)) {
    return InvalidArgument("duplicate token in vocabulary: '" + std::string(t.texts[static_cast<size_t>(dup.second)]) +
                           "' has ids " + std::to_string(dup.first) + " and " + std::to_string(dup.second));
  }
  t.attrs.resize(n);
  for (size_t id = 0; id < n; ++id) t.attrs[id] = attr_of(t.types[id]);
  t.bos = vocab.bos_id;
  t.eos = vocab.eos_id;
  t.unk = vocab.unk_id;
  t.pad = vocab.pad_id;
  t.sep = vocab.sep_id;
  t.eot = vocab.eot_id;
  t.eom = vocab.eom_id;

  if (t.kind == TokenizerKind::kBpe) {
    const PreTokenizerSpec* spec = find_pretokenizer(t.pre);
    if (!spec) {
      return Unsupported("unknown pre-tokenizer tokenizer.ggml.pre = '" + t.pre +
                         "' (supported: " + supported_pretokenizers() + ")");
    }
    if (t.pre.empty()) {
      KZ_LOG_WARN("tokenizer.ggml.pre is missing: using llama.cpp's 'default' pre-tokenizer; "
                  "tokenization may differ from the model's own (regenerate the GGUF)");
    }
    KZ_ASSIGN_OR_RETURN(RegexSplitter splitter, RegexSplitter::create(spec->patterns));
    t.splitter = std::make_unique<RegexSplitter>(std::move(splitter));
    t.ignore_merges = spec->ignore_merges;
    t.clean_spaces = spec->clean_spaces;
    t.add_bos = vocab.add_bos.value_or(spec->add_bos);
    t.add_eos = vocab.add_eos.value_or(false);
    t.add_space_prefix = vocab.add_space_prefix.value_or(false);
    t.bpe = std::make_unique<BpeModel>(BpeModel::build(t.by_text, t.size(), vocab.merges, kNoToken));
  } else {
    t.add_bos = vocab.add_bos.value_or(true);
    t.add_eos = vocab.add_eos.value_or(false);
    t.add_space_prefix = vocab.add_space_prefix.value_or(true);
    t.spm = std::make_unique<SpmModel>(SpmModel::build(t.by_text, t.texts, vocab.scores, t.unk));
  }
  if (t.add_bos && t.bos == kNoToken) return InvalidArgument("add_bos_token is true, but bos_token_id is not set");
  if (t.add_eos && t.eos == kNoToken) return InvalidArgument("add_eos_token is true, but eos_token_id is not set");

  t.apply_text_rules();
  for (int32_t id = 0; id < t.size(); ++id) {
    if (t.attrs[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) t.specials.push_back(id);
  }
  std::stable_sort(t.specials.begin(), t.specials.end(), [&](int32_t a, int32_t b) {
    return t.texts[a].size() > t.texts[b].size();
  });
  t.build_pieces();
  return Tokenizer(std::move(impl));
}

// llama.cpp's tokenizer_st_partition: one special token at a time, longest
// first, cut out of every text fragment at each (non-overlapping) occurrence.
void Tokenizer::Impl::partition(std::string_view text, bool parse_special, std::vector<Fragment>& frags) const {
  frags.clear();
  if (text.empty()) return;
  frags.push_back({kNoToken, 0, text.size()});
  std::vector<Fragment> next;
  for (int32_t id : specials) {
    if (!parse_special && (attrs[id] & (kAttrControl | kAttrUnknown))) continue;
    const std::string_view special = texts[id];
    // Cheap reject before rebuilding the fragment list.
    if (text.find(special) == std::string_view::npos) continue;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token != kNoToken) {
        next.push_back(f);
        continue;
      }
      const std::string_view window = text.substr(0, f.offset + f.length);
      size_t pos = f.offset;
      for (size_t match; (match = window.find(special, pos)) != std::string_view::npos;) {
        if (match > pos) next.push_back({kNoToken, pos, match - pos});
        next.push_back({id, match, special.size()});
        pos = match + special.size();
      }
      if (pos < window.size()) next.push_back({kNoToken, pos, window.size() - pos});
    }
    frags.swap(next);
  }
}

void Tokenizer::Impl::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
  std::string sanitized;
  if (!is_valid_utf8(text)) {
    sanitized = sanitize_utf8(text);
    text = sanitized;
  }
  std::vector<TextSpan> words;
  splitter->split(text, words);
  BpeScratch scratch;
  // Pre-tokens repeat a lot in real text: remember where each one's tokens
  // were first written to `out` (keys are views into `text`).
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> seen;
  for (const TextSpan& span : words) {
    const std::string_view word = text.substr(span.offset, span.length);
    if (word.size() == 1) {
      const int32_t id = bpe->byte_token(static_cast<uint8_t>(word[0]));
      if (id != kNoToken) out.push_back(id);
      continue;
    }
    auto it = seen.find(word);
    if (it != seen.end()) {
      const auto [start, count] = it->second;
      append_copy(out, start, count);
      continue;
    }
    const size_t start = out.size();
    const int32_t whole = ignore_merges ? bpe->find_raw(word) : kNoToken;
    if (whole != kNoToken) {
      out.push_back(whole);
    } else {
      bpe->encode_word(word, out, scratch);
    }
    seen.emplace(word, std::make_pair(start, out.size() - start));
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parse_special, bool add_special) const {
  const Impl& t = *impl_;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  std::vector<Impl::Fragment> frags;
  t.partition(text, parse_special, frags);

  if (add_special && t.add_bos) out.push_back(t.bos);
  if (t.kind == TokenizerKind::kBpe) {
    for (const Impl::Fragment& f : frags) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
      } else {
        t.encode_bpe(text.substr(f.offset, f.length), out);
      }
    }
  } else {
    SpmScratch scratch;
    std::string escaped;
    bool after_special = true;  // the text start counts as "after a special token"
    for (const Impl::Fragment& f : frags) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
        after_special = true;
        continue;
      }
      escaped.clear();
      if (t.add_space_prefix && after_special) escaped += kSpaceMark;
      for (char c : text.substr(f.offset, f.length)) {
        if (c == ' ') {
          escaped += kSpaceMark;
        } else {
          escaped += c;
        }
      }
      t.spm->encode(escaped, out, scratch);
      after_special = false;
    }
  }
  if (add_special && t.add_eos) out.push_back(t.eos);
  return out;
}

std::string_view Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  const Impl& t = *impl_;
  if (!valid_id(id)) return {};
  if (!render_special && (t.attrs[id] & (kAttrControl | kAttrUnknown))) return {};
  return t.pieces[id];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, const DecodeOptions& options) const {
  const Impl& t = *impl_;
  bool strip_space = t.add_space_prefix;
  if (options.remove_special && t.add_bos && !ids.empty() && ids.front() == t.bos) {
    strip_space = false;  // llama.cpp keeps the space after a removed BOS
    ids = ids.subspan(1);
  }
  if (options.remove_special && t.add_eos && !ids.empty() && ids.back() == t.eos) {
    ids = ids.first(ids.size() - 1);
  }
  std::string out;
  for (int32_t id : ids) {
    std::string_view piece = token_to_piece(id, options.render_special);
    if (strip_space && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    strip_space = false;  // only the very first token, rendered or not
    out.append(piece);
  }
  if (options.clean_spaces && t.clean_spaces) out = clean_up_spaces(out);
  return out;
}

std::string clean_up_spaces(std::string_view in) {
  std::string s(in);
  // 1: " ?" " !" " ." " ," lose the space.
  std::string a;
  a.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char x = s[i];
    if (i > 0 && s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') && !a.empty()) a.pop_back();
    a.push_back(x);
  }
  // 2: " ' " becomes "'". As in llama.cpp, the skipped space after it no
  // longer counts as a space for the next character.
  std::string b;
  b.reserve(a.size());
  bool prev_was_skipped = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = a[i];
    const bool prev_space = i > 0 && a[i - 1] == ' ' && !prev_was_skipped;
    prev_was_skipped = false;
    if (x == '\'' && prev_space && i + 1 < a.size() && a[i + 1] == ' ') {
      b.pop_back();  // the space before
      b.push_back(x);
      ++i;  // the space after
      prev_was_skipped = true;
      continue;
    }
    b.push_back(x);
  }
  // 3: " 's" " 'm" " 're" " 've" lose the space (" 't" " 'd" " 'll" keep it).
  std::string c;
  c.reserve(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    const char x = b[i];
    if (x == '\'' && i > 0 && b[i - 1] == ' ' && i + 1 < b.size()) {
      const char x1 = b[i + 1];
      const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
      const bool drop = x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e');
      if (drop && !c.empty()) c.pop_back();
    }
    c.push_back(x);
  }
  return c;
}

int32_t Tokenizer::vocab_size() const { return impl_->size(); }

std::string_view Tokenizer::token_text(int32_t id) const {
  return valid_id(id) ? impl_->texts[static_cast<size_t>(id)] : std::string_view();
}

TokenType Tokenizer::token_type(int32_t id) const {
  return valid_id(id) ? impl_->types[id] : TokenType::kUndefined;
}

bool Tokenizer::is_control(int32_t id) const { return valid_id(id) && (impl_->attrs[id] & kAttrControl); }
bool Tokenizer::is_eog(int32_t id) const { return valid_id(id) && impl_->eog_flag[id]; }
const std::vector<int32_t>& Tokenizer::eog_ids() const { return impl_->eog; }
int32_t Tokenizer::find_token(std::string_view text) const { return impl_->find(text); }
TokenizerKind Tokenizer::kind() const { return impl_->kind; }
const std::string& Tokenizer::pre() const { return impl_->pre; }
int32_t Tokenizer::bos_id() const { return impl_->bos; }
int32_t Tokenizer::eos_id() const { return impl_->eos; }
int32_t Tokenizer::eot_id() const { return impl_->eot; }
int32_t Tokenizer::unk_id() const { return impl_->unk; }
int32_t Tokenizer::pad_id() const { return impl_->pad; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
bool Tokenizer::add_eos() const { return impl_->add_eos; }
bool Tokenizer::add_space_prefix() const { return impl_->add_space_prefix; }
bool Tokenizer::clean_spaces() const { return impl_->clean_spaces; }

}  // namespace kazeia::text
