// libFuzzer target: tokenizer encode / decode / streaming decode on arbitrary bytes.
//
// Tokenizers: the synthetic qwen3-kq vocabulary (byte-level BPE, qwen2 regex)
// when ../shared/models/qwen3-kq-q4_k_m.gguf or $KAZEIA_FUZZ_VOCAB exists,
// plus two built-in vocabularies that need no file (a small byte-level BPE
// with merges and special tokens, a small SentencePiece with byte fallback).
//
// Checked for every input (besides no crash / leak / UB):
//  - every id is inside the vocabulary;
//  - BPE: decode(encode(x)) == x for valid UTF-8 x, in both special modes
//    (control tokens rendered back as text); for any x it is
//    sanitize_utf8(x), since invalid UTF-8 is tokenized as U+FFFD;
//  - SentencePiece: decode(encode(x)) == x for valid UTF-8 x without U+2581
//    (which reads back as a space);
//  - the streaming detokenizer, fed one id at a time, gives
//    sanitize_utf8(decode(ids)), and only valid UTF-8 at every step.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "text/detokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode_utf8.h"

using namespace kazeia::text;

namespace {

std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<Tokenizer>> list;
  return list;
}

void check(bool ok, const char* what, const std::string& input) {
  if (ok) return;
  std::fprintf(stderr, "tokenizer_fuzz: %s failed for input of %zu bytes\n", what, input.size());
  std::abort();
}

Vocab builtin_bpe() {
  Vocab v;
  v.kind = TokenizerKind::kBpe;
  v.pre = "qwen2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(gpt2_encode(std::string(1, static_cast<char>(b))));
  const char* merges[][3] = {{"h", "e", "he"}, {"l", "l", "ll"}, {"he", "ll", "hell"}, {"hell", "o", "hello"},
                             {"\xC4\xA0", "w", "\xC4\xA0w"}, {"o", "r", "or"}, {"\xC4\xA0w", "or", "\xC4\xA0wor"},
                             {"l", "d", "ld"}, {"\xC4\xA0wor", "ld", "\xC4\xA0world"},
                             {"\xC4\xA0", "\xC4\xA0", "\xC4\xA0\xC4\xA0"}};
  for (const auto& m : merges) {
    v.merges.push_back(std::string(m[0]) + " " + m[1]);
    v.tokens.push_back(m[2]);
  }
  // Malformed merges and merges outside the byte alphabet (a literal space,
  // raw UTF-8) must be ignored, not crash.
  for (const char* bad : {"nospace", "a  b", "\xC3 \xA9", " ", ""}) v.merges.push_back(bad);
  v.types.assign(v.tokens.size(), TokenType::kNormal);
  for (const char* special : {"<|im_start|>", "<|im_end|>", "<|endoftext|>"}) {
    v.tokens.push_back(special);
    v.types.push_back(TokenType::kControl);
  }
  for (const char* user : {"<think>", "</think>", "<tool_call>"}) {
    v.tokens.push_back(user);
    v.types.push_back(TokenType::kUserDefined);
  }
  v.eos_id = static_cast<int32_t>(v.tokens.size()) - 5;
  return v;
}

Vocab builtin_spm() {
  Vocab v;
  v.kind = TokenizerKind::kSpm;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    v.tokens.push_back(hex);
    v.types.push_back(TokenType::kByte);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  const char* pieces[] = {"\xE2\x96\x81", "a", "e", "t", "h", "\xE2\x96\x81t", "he", "\xE2\x96\x81the",
                          "\xE2\x96\x81\xE2\x96\x81", "\xC3\xA9", "\xE2\x96\x81" "a", "at", "\xE2\x96\x81" "at"};
  float score = -1.0f;
  for (const char* p : pieces) {
    v.tokens.push_back(p);
    v.types.push_back(TokenType::kNormal);
    v.scores.push_back(score);
    score -= 0.5f;
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  return v;
}

void add(kazeia::Result<Tokenizer> t, const char* name) {
  if (!t.ok()) {
    std::fprintf(stderr, "tokenizer_fuzz: %s: %s\n", name, t.status().to_string().c_str());
    std::abort();
  }
  tokenizers().push_back(std::make_unique<Tokenizer>(std::move(t).value()));
}

std::string stream_decode(const Tokenizer& tok, const std::vector<int32_t>& ids, bool render,
                          const std::string& input) {
  StreamingDetokenizer::Options o;
  o.render_special = render;
  o.whole_text = true;
  StreamingDetokenizer stream(tok, o);
  std::string out;
  for (int32_t id : ids) {
    const std::string part = stream.push(id);
    check(is_valid_utf8(part), "streaming output is valid UTF-8", input);
    out += part;
  }
  out += stream.flush();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("KAZEIA_FUZZ_VOCAB");
  const std::string path = env && *env ? env : std::string(KAZEIA_SOURCE_DIR) + "/../shared/models/qwen3-kq-q4_k_m.gguf";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
    add(Tokenizer::load(path), path.c_str());
  } else {
    std::fprintf(stderr, "tokenizer_fuzz: %s not found, built-in vocabularies only\n", path.c_str());
  }
  add(Tokenizer::create(builtin_bpe()), "built-in BPE");
  add(Tokenizer::create(builtin_spm()), "built-in SPM");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const bool valid = is_valid_utf8(input);
  for (const auto& tok_ptr : tokenizers()) {
    const Tokenizer& tok = *tok_ptr;
    for (bool parse_special : {false, true}) {
      const std::vector<int32_t> ids = tok.encode(input, parse_special, /*add_special=*/false);
      for (int32_t id : ids) check(tok.valid_id(id), "ids inside the vocabulary", input);
      DecodeOptions d;
      d.render_special = parse_special;
      const std::string decoded = tok.decode(ids, d);
      if (tok.kind() == TokenizerKind::kBpe) {
        check(decoded == sanitize_utf8(input), "BPE decode(encode(x)) == sanitize(x)", input);
        if (valid) check(decoded == input, "BPE decode(encode(x)) == x", input);
      } else if (!parse_special && valid && input.find("\xE2\x96\x81") == std::string::npos) {
        // (Invalid UTF-8 can swallow the U+2581 written for a following
        // space when characters are cut by lead byte, as in llama.cpp.)
        check(decoded == input, "SPM decode(encode(x)) == x", input);
      }
      check(stream_decode(tok, ids, parse_special, input) == sanitize_utf8(decoded),
            "streaming == sanitize(decode)", input);
    }
    // add_special must not break anything either.
    const std::vector<int32_t> with_special = tok.encode(input, true, true);
    for (int32_t id : with_special) check(tok.valid_id(id), "ids inside the vocabulary (add_special)", input);
  }
  return 0;
}
