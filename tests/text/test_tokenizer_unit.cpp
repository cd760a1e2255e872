// Tokenizer tests on small hand-made vocabularies, with expected ids worked
// out by hand from the merge rules: they need no shared data.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "text/pretokenize.h"
#include "text/spm.h"
#include "text/tokenizer.h"
#include "text/unicode_utf8.h"
#include "test_tokenizer_vocabs.h"

namespace kazeia::text {
namespace {

using namespace testvocab;

TEST(BpeTokenizer, MergesByRank) {
  const Tokenizer tok = make(small_bpe_vocab("gpt-2"));
  // "hello": he (rank 0), ll (1), hell (2), hello (3).
  EXPECT_EQ(tok.encode("hello", false, false), (Ids{kHello}));
  // " world": Ġw (4), or (5), Ġwor (6), ld (7), Ġworld (8).
  EXPECT_EQ(tok.encode("hello world", false, false), (Ids{kHello, kGworld}));
  // "held": he (0), then "l d" (7): the pair l+l that would give "hell" is gone.
  EXPECT_EQ(tok.encode("held", false, false), (Ids{kHe, kLd}));
  // Equal ranks: the leftmost pair first.
  EXPECT_EQ(tok.encode("lll", false, false), (Ids{kLl, 'l'}));
  EXPECT_EQ(tok.encode("llll", false, false), (Ids{kLl, kLl}));
  // Bytes without merges stay single bytes; UTF-8 é is two byte tokens.
  EXPECT_EQ(tok.encode("\xC3\xA9!", false, false), (Ids{0xC3, 0xA9, '!'}));
  EXPECT_EQ(tok.encode("", true, true), (Ids{}));
}

TEST(BpeTokenizer, PreTokenizerDecidesWhatCanMerge) {
  const Tokenizer tok = make(small_bpe_vocab("gpt-2"));
  // GPT-2 regex: " world" is one pre-token, "hello" another; "hello," splits at ",".
  EXPECT_EQ(tok.encode("hello,world", false, false), (Ids{kHello, ',', 'w', kOr, kLd}));
  // Two spaces: the first is a pre-token of its own (\s+(?!\S)), the second joins "world".
  EXPECT_EQ(tok.encode("hello  world", false, false), (Ids{kHello, ' ', kGworld}));
}

TEST(BpeTokenizer, SpecialTokens) {
  const Tokenizer tok = make(small_bpe_vocab("qwen2"));
  // USER_DEFINED always, CONTROL only with parse_special.
  EXPECT_EQ(tok.encode("<think>x<|eot|>", true, false), (Ids{kThink, 'x', kEot}));
  EXPECT_EQ(tok.encode("<think>x<|eot|>", false, false),
            (Ids{kThink, 'x', '<', '|', 'e', 'o', 't', '|', '>'}));
  // Promoted to CONTROL by its text (llama.cpp), so also end-of-generation.
  EXPECT_EQ(tok.encode("<|im_end|>", true, false), (Ids{kImEnd}));
  EXPECT_TRUE(tok.is_control(kImEnd));
  EXPECT_TRUE(tok.is_eog(kImEnd));
  EXPECT_TRUE(tok.is_eog(kEot));
  EXPECT_FALSE(tok.is_eog(kThink));
  // Longest special token first.
  EXPECT_EQ(tok.encode("<x><y><x>", false, false), (Ids{kXy, kX}));
  // Text between special tokens is tokenized on its own.
  EXPECT_EQ(tok.encode("hello<think>hello", false, false), (Ids{kHello, kThink, kHello}));
  // add_special: BOS only when the vocabulary asks for it.
  Vocab with_bos = small_bpe_vocab("qwen2");
  with_bos.add_bos = true;
  with_bos.add_eos = true;
  const Tokenizer tok2 = make(std::move(with_bos));
  EXPECT_EQ(tok2.encode("hello", false, true), (Ids{kEot, kHello, kEot}));
  EXPECT_EQ(tok2.encode("hello", false, false), (Ids{kHello}));
}

TEST(BpeTokenizer, DecodeAndPieces) {
  const Tokenizer tok = make(small_bpe_vocab("qwen2"));
  EXPECT_EQ(tok.token_to_piece(kGworld), " world");
  EXPECT_EQ(tok.token_to_piece(kEot), "");
  EXPECT_EQ(tok.token_to_piece(kEot, true), "<|eot|>");
  EXPECT_EQ(tok.token_to_piece(kThink), "<think>");  // USER_DEFINED always renders
  EXPECT_EQ(tok.token_to_piece(-1), "");
  EXPECT_EQ(tok.token_to_piece(100000), "");
  const Ids ids = tok.encode("<think>hello world<|eot|>\xC3\xA9", true, false);
  EXPECT_EQ(tok.decode(ids), "<think>hello world\xC3\xA9");
  DecodeOptions render;
  render.render_special = true;
  EXPECT_EQ(tok.decode(ids, render), "<think>hello world<|eot|>\xC3\xA9");
  // Raw bytes: half a character stays half a character.
  EXPECT_EQ(tok.decode(Ids{0xC3}), "\xC3");
}

TEST(BpeTokenizer, InvalidUtf8BecomesReplacementChar) {
  const Tokenizer tok = make(small_bpe_vocab("qwen2"));
  // As llama.cpp: invalid input is tokenized as U+FFFD (EF BF BD).
  EXPECT_EQ(tok.encode("a\xFF", false, false), (Ids{'a', 0xEF, 0xBF, 0xBD}));
  EXPECT_EQ(tok.decode(tok.encode("he\xE2\x82", false, false)), "he\xEF\xBF\xBD");
}

TEST(BpeTokenizer, IgnoreMergesTakesWholeTokens) {
  // llama3-style: a pre-token that is a token is emitted whole, even when the
  // merges would not build it.
  Vocab v = small_bpe_vocab("llama-bpe");
  v.tokens.push_back("abc");  // 270, no merge leads here
  v.types.push_back(TokenType::kNormal);
  v.bos_id = kEot;
  const Tokenizer tok = make(std::move(v));
  EXPECT_TRUE(tok.add_bos());  // llama-bpe adds BOS unless the file says otherwise
  EXPECT_EQ(tok.encode("abc", false, false), (Ids{270}));
  const Tokenizer plain = make(small_bpe_vocab("qwen2"));
  EXPECT_EQ(plain.encode("abc", false, false), (Ids{'a', 'b', 'c'}));
}

TEST(BpeTokenizer, CreateErrors) {
  Vocab unknown_pre = small_bpe_vocab("no-such-pre");
  Result<Tokenizer> r = Tokenizer::create(std::move(unknown_pre));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("no-such-pre"), std::string::npos);
  EXPECT_NE(r.status().message().find("qwen35"), std::string::npos);  // lists what is supported

  Vocab dup = small_bpe_vocab("qwen2");
  dup.tokens[kLd] = "he";
  r = Tokenizer::create(std::move(dup));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("duplicate"), std::string::npos);

  Vocab no_bos = small_bpe_vocab("qwen2");
  no_bos.bos_id = kNoToken;
  no_bos.add_bos = true;
  EXPECT_FALSE(Tokenizer::create(std::move(no_bos)).ok());

  Vocab bad_id = small_bpe_vocab("qwen2");
  bad_id.eos_id = 5000;
  EXPECT_FALSE(Tokenizer::create(std::move(bad_id)).ok());

  Vocab bad_types = small_bpe_vocab("qwen2");
  bad_types.types.pop_back();
  EXPECT_FALSE(Tokenizer::create(std::move(bad_types)).ok());
}

TEST(SpmTokenizer, MergesByScore) {
  const Tokenizer tok = make(small_spm_vocab());
  EXPECT_TRUE(tok.add_bos());
  EXPECT_TRUE(tok.add_space_prefix());
  // "▁hello": ll (-2.5), llo (-2.0), ▁h (-3.0), ▁he (-2.2), ▁hello (-1.5).
  EXPECT_EQ(tok.encode("hello", false, false), (Ids{kMarkHello}));
  // "▁hell": ll, then ▁h beats he (-3 > -4), then ▁he; "▁hell" is no token.
  EXPECT_EQ(tok.encode("hell", false, false), (Ids{kMarkHe, kLlS}));
  EXPECT_EQ(tok.encode("hello", false, true), (Ids{1, kMarkHello}));
  // Spaces become ▁; a run of them stays single ▁ tokens.
  EXPECT_EQ(tok.encode("a  a", false, false), (Ids{kMarkA, kMark, kMarkA}));
  // Byte fallback for a character that is not a piece.
  EXPECT_EQ(tok.encode("h\xC3\xA9", false, false), (Ids{kMarkH, kByte0 + 0xC3, kByte0 + 0xA9}));
  EXPECT_EQ(tok.encode("", false, true), (Ids{1}));
  EXPECT_EQ(tok.encode("", false, false), (Ids{}));
}

TEST(SpmTokenizer, SpacePrefixAfterSpecialTokens) {
  const Tokenizer tok = make(small_spm_vocab());
  // Each fragment after a special token gets its own space prefix (llama.cpp).
  EXPECT_EQ(tok.encode("<s>hello</s>a", true, false), (Ids{1, kMarkHello, 2, kMarkA}));
  EXPECT_EQ(tok.encode("<unk>a", true, false), (Ids{0, kMarkA}));
  // Without parse_special the markers are text ("<" ">" "s" "/" as bytes).
  EXPECT_EQ(tok.encode("<s>", false, false), (Ids{kMark, kByte0 + '<', kByte0 + 's', kByte0 + '>'}));
  Vocab no_prefix = small_spm_vocab();
  no_prefix.add_space_prefix = false;
  EXPECT_EQ(make(std::move(no_prefix)).encode("hello", false, false), (Ids{kHeS, kLlo}));
}

TEST(SpmTokenizer, DecodeLeadingSpaceRule) {
  const Tokenizer tok = make(small_spm_vocab());
  // decode drops the one leading space encode added ...
  EXPECT_EQ(tok.decode(tok.encode("hello a", false, false)), "hello a");
  EXPECT_EQ(tok.decode(tok.encode(" hello", false, false)), " hello");
  // ... only on the very first token: a BOS there consumes the rule, and
  // llama.cpp keeps the space when remove_special drops the BOS, too.
  EXPECT_EQ(tok.decode(Ids{1, kMarkHello}), " hello");
  DecodeOptions remove;
  remove.remove_special = true;
  EXPECT_EQ(tok.decode(Ids{1, kMarkHello}, remove), " hello");
  DecodeOptions render;
  render.render_special = true;
  EXPECT_EQ(tok.decode(Ids{1, kMarkHello, 2}, render), "<s> hello</s>");
  EXPECT_EQ(tok.decode(Ids{kByte0 + 0xC3, kByte0 + 0xA9}), "\xC3\xA9");
}

// The word-splitting shortcut gives the same ids as merging the whole text.
TEST(SpmTokenizer, WordSplittingIsExact) {
  Vocab v = small_spm_vocab();
  StringTable texts;
  for (const std::string& t : v.tokens) texts.push_back(t);
  TokenLookup lookup;
  ASSERT_TRUE(lookup.build(texts));
  const SpmModel split = SpmModel::build(lookup, texts, v.scores, 0);
  EXPECT_TRUE(split.splits_words());
  // One token joining a letter and a following ▁ turns the shortcut off.
  StringTable texts2;
  for (const std::string& t : v.tokens) texts2.push_back(t);
  texts2.push_back("o\xE2\x96\x81z");
  std::vector<float> scores = v.scores;
  scores.push_back(-100.0f);
  TokenLookup lookup2;
  ASSERT_TRUE(lookup2.build(texts2));
  const SpmModel whole = SpmModel::build(lookup2, texts2, scores, 0);
  EXPECT_FALSE(whole.splits_words());
  const std::string text = "\xE2\x96\x81hello\xE2\x96\x81\xE2\x96\x81hell\xE2\x96\x81" "a\xC3\xA9hello\xE2\x96\x81";
  SpmScratch scratch;
  Ids a, b;
  split.encode(text, a, scratch);
  whole.encode(text, b, scratch);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, (Ids{kMarkHello, kMark, kMarkHe, kLlS, kMarkA, kByte0 + 0xC3, kByte0 + 0xA9, kHeS, kLlo, kMark}));
}

// ---------------------------------------------------------------------------
// Pre-tokenizer regexes.
std::vector<std::string> split_with(const std::string& pre, const std::string& text) {
  const PreTokenizerSpec* spec = find_pretokenizer(pre);
  EXPECT_NE(spec, nullptr) << pre;
  Result<RegexSplitter> splitter = RegexSplitter::create(spec->patterns);
  EXPECT_TRUE(splitter.ok()) << splitter.status().to_string();
  std::vector<TextSpan> spans;
  splitter->split(text, spans);
  std::vector<std::string> out;
  for (const TextSpan& s : spans) out.push_back(text.substr(s.offset, s.length));
  return out;
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, Qwen2) {
  EXPECT_EQ(split_with("qwen2", "Hello, world! It's 2024."),
            (Pieces{"Hello", ",", " world", "!", " It", "'s", " ", "2", "0", "2", "4", "."}));
  EXPECT_EQ(split_with("qwen2", "a  \n\n b"), (Pieces{"a", "  \n\n", " b"}));
  // U+0085 (NEL) is whitespace for llama.cpp (Unicode White_Space), not for PCRE2's \s.
  EXPECT_EQ(split_with("qwen2", "a\xC2\x85\xC2\x85" "b"), (Pieces{"a", "\xC2\x85", "\xC2\x85" "b"}));
}

TEST(PreTokenizer, Qwen35KeepsMarksWithLetters) {
  // "e" + U+0301 (combining acute): one letter run for qwen35, split by qwen2.
  EXPECT_EQ(split_with("qwen35", "cafe\xCC\x81!"), (Pieces{"cafe\xCC\x81", "!"}));
  EXPECT_EQ(split_with("qwen2", "cafe\xCC\x81!"), (Pieces{"cafe", "\xCC\x81!"}));
}

TEST(PreTokenizer, OtherFamilies) {
  EXPECT_EQ(split_with("llama-bpe", "12345 abc"), (Pieces{"123", "45", " abc"}));
  // smollm: digits one by one first, then the GPT-2 regex.
  EXPECT_EQ(split_with("smollm", "ab 123"), (Pieces{"ab", " ", "1", "2", "3"}));
  EXPECT_EQ(split_with("gpt-2", "ab 123"), (Pieces{"ab", " 123"}));
  EXPECT_EQ(split_with("falcon", "Hi!! 1234"), (Pieces{"Hi", "!!", " ", "123", "4"}));
  EXPECT_EQ(split_with("deepseek-coder", "ab 12\n\xE4\xB8\xAD\xE6\x96\x87"),
            (Pieces{"ab", " ", "1", "2", "\n", "\xE4\xB8\xAD\xE6\x96\x87"}));
  EXPECT_NE(find_pretokenizer(""), nullptr);  // missing key: llama.cpp's default
  EXPECT_EQ(find_pretokenizer("no-such-pre"), nullptr);
}

TEST(PreTokenizer, WidenWhitespace) {
  EXPECT_EQ(widen_whitespace(R"(\s+(?!\S))"), R"([\s\x{85}]+(?![^\s\x{85}]))");
  EXPECT_EQ(widen_whitespace(R"([^\s\p{L}])"), R"([^\s\x{85}\p{L}])");
  EXPECT_EQ(widen_whitespace(R"([\]\s]\\s)"), R"([\]\s\x{85}]\\s)");
}

// ---------------------------------------------------------------------------
TEST(Utf8, ValidationAndReplacement) {
  EXPECT_TRUE(is_valid_utf8("abc \xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("abcdefgh\xE2\x82"));
  // Maximal subparts, checked against Python's bytes.decode(errors="replace").
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(sanitize_utf8("\xF0\x9F\x98"), r);
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), r + r + r);
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), r + r);
  EXPECT_EQ(sanitize_utf8("\xE0\x80\xAF"), r + r + r);
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), r + r + r + r);
  EXPECT_EQ(sanitize_utf8("\xE2\x82" "A"), r + "A");
  EXPECT_EQ(sanitize_utf8("a\x80" "b"), "a" + r + "b");
  EXPECT_EQ(sanitize_utf8("\xF1\x80\x80\xC3\xA9"), r + "\xC3\xA9");
  EXPECT_EQ(sanitize_utf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

TEST(Utf8, StreamingEqualsBatchForEverySplit) {
  // Every way of cutting each input into two or three pushes.
  const std::string inputs[] = {"a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z", "\xF0\x9F\x98\xE2\x82\xAC\xFF\xC3",
                                "\xED\xA0\x80\xE0\x80\xAF\xF4\x90\x80\x80\xC2"};
  for (const std::string& in : inputs) {
    const std::string expected = sanitize_utf8(in);
    for (size_t i = 0; i <= in.size(); ++i) {
      for (size_t j = i; j <= in.size(); ++j) {
        Utf8Sanitizer s;
        std::string out;
        s.push(in.substr(0, i), out);
        s.push(in.substr(i, j - i), out);
        s.push(in.substr(j), out);
        s.flush(out);
        EXPECT_EQ(out, expected) << "cut at " << i << ", " << j;
      }
    }
  }
}

TEST(Utf8, Gpt2Alphabet) {
  EXPECT_EQ(gpt2_encode(" "), "\xC4\xA0");   // Ġ
  EXPECT_EQ(gpt2_encode("\n"), "\xC4\x8A");  // Ċ
  EXPECT_EQ(gpt2_encode("a!"), "a!");
  for (int b = 0; b < 256; ++b) {
    const std::string raw(1, static_cast<char>(b));
    EXPECT_EQ(gpt2_decode(gpt2_encode(raw)), raw);
  }
  EXPECT_FALSE(gpt2_decode(" ").has_value());  // a literal space is not in the alphabet
  EXPECT_EQ(gpt2_decode_lenient("a b"), "a b");
}

}  // namespace
}  // namespace kazeia::text
