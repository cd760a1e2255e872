#include "text/pretokenize.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

namespace kazeia::text {

namespace {

// Regexes of llama.cpp's BPE pre-tokenizers (llama-vocab.cpp), in PCRE
// syntax. The case-insensitive contraction group (?i:'s|...) is spelled out
// as llama.cpp's adapted form does, so it stays ASCII-only.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen3.5: letter runs and the punctuation run also take combining marks.
constexpr std::string_view kQwen35 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Family {
  PreTokenizerSpec spec;
  std::vector<std::string_view> names;  // tokenizer.ggml.pre values
  // Names whose clean_spaces differs from the family's (llama.cpp sets the
  // flag per name, not per regex).
  std::vector<std::string_view> names_flip_clean_spaces;
};

const std::vector<Family>& families() {
  static const std::vector<Family> kFamilies = [] {
    std::vector<Family> f;
    f.push_back({{"default",
                  {R"([\p{P}\$\+<=>\^~\|]+)", std::string(kGpt2), R"(\p{N}+)", "[0-9][0-9][0-9]"},
                  false, true, false},
                 {"default", ""},
                 {}});
    f.push_back({{"gpt2", {std::string(kGpt2)}, false, true, false},
                 {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
                  "a.x-4.0", "mellum", "modern-bert", "mpt", "olmo", "jais", "exaone4", "trillion",
                  "granite-docling"},
                 {"trillion", "granite-docling"}});  // no clean-up
    f.push_back({{"llama3", {std::string(kLlama3)}, true, true, true},
                 {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                  "lfm2", "jina-v5-nano"},
                 {}});
    f.push_back({{"dbrx", {std::string(kLlama3)}, false, true, false}, {"dbrx", "smaug-bpe"}, {}});
    // Digits one by one first, then the GPT-2 regex.
    f.push_back({{"starcoder", {R"(\p{N})", std::string(kGpt2)}, false, true, false},
                 {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
                  "mellum2"},
                 {"command-r", "smollm"}});  // no clean-up
    f.push_back({{"qwen2", {std::string(kQwen2)}, false, false, false},
                 {"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open",
                  "stablelm2", "megrez"},
                 {"stablelm2", "megrez"}});  // with clean-up
    f.push_back({{"qwen35", {std::string(kQwen35)}, false, false, false}, {"qwen35"}, {}});
    f.push_back({{"falcon", {R"([\p{P}\$\+<=>\^~\|]+)", std::string(kGpt2), "[0-9][0-9][0-9]"}, false, true, false},
                 {"falcon"},
                 {}});
    // The CJK ranges are code point ranges: U+4E00-U+9FA5, U+0800-U+4E00, U+AC00-U+D7FF.
    f.push_back({{"deepseek-coder",
                  {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)",
                   R"(\p{N})"},
                  false, false, false},
                 {"deepseek-coder"},
                 {}});
    return f;
  }();
  return kFamilies;
}

// Per-name specs, built once (the family spec with the name's own flags).
struct NamedSpec {
  std::string name;
  PreTokenizerSpec spec;
};

const std::vector<NamedSpec>& named_specs() {
  static const std::vector<NamedSpec> kSpecs = [] {
    std::vector<NamedSpec> out;
    for (const Family& family : families()) {
      for (std::string_view name : family.names) {
        PreTokenizerSpec spec = family.spec;
        for (std::string_view flip : family.names_flip_clean_spaces) {
          if (flip == name) spec.clean_spaces = !spec.clean_spaces;
        }
        out.push_back({std::string(name), std::move(spec)});
      }
    }
    return out;
  }();
  return kSpecs;
}

}  // namespace

const PreTokenizerSpec* find_pretokenizer(std::string_view pre) {
  for (const NamedSpec& s : named_specs()) {
    if (s.name == pre) return &s.spec;
  }
  return nullptr;
}

std::string supported_pretokenizers() {
  std::string out;
  for (const NamedSpec& s : named_specs()) {
    if (s.name.empty()) continue;
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

std::string widen_whitespace(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[i + 1];
      ++i;
      if (e == 's') {
        out += in_class ? R"(\s\x{85})" : R"([\s\x{85}])";
      } else if (e == 'S' && !in_class) {
        out += R"([^\s\x{85}])";
      } else {
        out += '\\';
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal, not the end of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() {
    if (code) pcre2_code_free(code);
  }
};

RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;
RegexSplitter::~RegexSplitter() = default;

Result<RegexSplitter> RegexSplitter::create(const std::vector<std::string>& patterns) {
  RegexSplitter splitter;
  for (const std::string& raw : patterns) {
    const std::string pattern = widen_whitespace(raw);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    auto compiled = std::make_unique<Compiled>();
    compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
    if (!compiled->code) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(error, message.data(), message.size());
      return Internal("pre-tokenizer regex '" + raw + "' does not compile at offset " +
                      std::to_string(error_offset) + ": " +
                      reinterpret_cast<const char*>(message.data()));
    }
    // Without JIT (e.g. not available on this CPU) the interpreter still works.
    compiled->jit = pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE) == 0;
    splitter.regexes_.push_back(std::move(compiled));
  }
  return splitter;
}

namespace {

// One regex over one chunk: matches and the gaps between them become pieces.
void split_chunk(pcre2_code* code, pcre2_match_data* md, std::string_view text, TextSpan chunk,
                 std::vector<TextSpan>& out) {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + chunk.offset);
  size_t pos = 0;        // search start, relative to the chunk
  size_t gap_begin = 0;  // start of text not yet emitted
  uint32_t options = PCRE2_NO_UTF_CHECK;  // the caller validated the text
  while (pos < chunk.length) {
    int rc = pcre2_match(code, subject, chunk.length, pos, options, md, nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // Pathological input for the JIT's fixed stack: the interpreter uses the heap.
      rc = pcre2_match(code, subject, chunk.length, pos, options | PCRE2_NO_JIT, md, nullptr);
    }
    if (rc < 0) break;  // no (further) match, or a resource limit: the rest is one gap
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t begin = ov[0];
    const size_t end = ov[1];
    if (end == begin) {
      // Empty match (none of the supported patterns produce one): step over
      // one character without cutting.
      pos = begin + 1;
      while (pos < chunk.length && (subject[pos] & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (begin > gap_begin) out.push_back({chunk.offset + gap_begin, begin - gap_begin});
    out.push_back({chunk.offset + begin, end - begin});
    gap_begin = end;
    pos = end;
  }
  if (gap_begin < chunk.length) out.push_back({chunk.offset + gap_begin, chunk.length - gap_begin});
}

}  // namespace

void RegexSplitter::split(std::string_view text, std::vector<TextSpan>& pieces) const {
  pieces.clear();
  if (text.empty()) return;
  pieces.push_back({0, text.size()});
  if (regexes_.empty()) return;
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  std::vector<TextSpan> next;
  for (const auto& regex : regexes_) {
    next.clear();
    next.reserve(pieces.size() + text.size() / 4);
    for (const TextSpan& chunk : pieces) split_chunk(regex->code, md, text, chunk, next);
    pieces.swap(next);
  }
  pcre2_match_data_free(md);
}

}  // namespace kazeia::text
