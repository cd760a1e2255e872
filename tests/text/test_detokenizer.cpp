// Streaming detokenizer: complete UTF-8 only, U+FFFD for what cannot
// complete, and the same bytes as decode() however the tokens arrive.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "test_tokenizer_vocabs.h"
#include "text/detokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode_utf8.h"

namespace kazeia::text {
namespace {

using namespace testvocab;

const std::string kFffd = "\xEF\xBF\xBD";

int32_t byte_tok(uint8_t b) { return kByte0 + b; }  // SPM <0xNN>

// Pushes ids one by one; returns what each push produced, then flush's output last.
StreamingDetokenizer::Options whole_text(bool render_special = false) {
  StreamingDetokenizer::Options o;
  o.whole_text = true;
  o.render_special = render_special;
  return o;
}

std::vector<std::string> stream_all(const Tokenizer& tok, const Ids& ids,
                                    StreamingDetokenizer::Options options = whole_text()) {
  StreamingDetokenizer stream(tok, options);
  std::vector<std::string> parts;
  for (int32_t id : ids) parts.push_back(stream.push(id));
  parts.push_back(stream.flush());
  return parts;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += p;
  return out;
}

TEST(StreamingDetokenizer, CharacterSplitAcrossByteTokens) {
  const Tokenizer tok = make(small_spm_vocab());
  // "é€😀" as SPM byte tokens: nothing comes out until a character is complete.
  const Ids ids = {byte_tok(0xC3), byte_tok(0xA9), byte_tok(0xE2), byte_tok(0x82), byte_tok(0xAC),
                   byte_tok(0xF0), byte_tok(0x9F), byte_tok(0x98), byte_tok(0x80)};
  const std::vector<std::string> parts = stream_all(tok, ids);
  const std::vector<std::string> expected = {"", "\xC3\xA9", "", "", "\xE2\x82\xAC", "", "", "", "\xF0\x9F\x98\x80", ""};
  EXPECT_EQ(parts, expected);
}

TEST(StreamingDetokenizer, BpeTokensEndingInsideACharacter) {
  const Tokenizer tok = make(small_bpe_vocab("qwen2"));
  // Byte-level BPE: "é" = tokens 0xC3, 0xA9; then "hello".
  const std::vector<std::string> parts = stream_all(tok, Ids{0xC3, 0xA9, kHello});
  EXPECT_EQ(parts, (std::vector<std::string>{"", "\xC3\xA9", "hello", ""}));
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementAsSoonAsCertain) {
  const Tokenizer tok = make(small_spm_vocab());
  // 0xFF can never start a character: U+FFFD at once.
  EXPECT_EQ(stream_all(tok, Ids{byte_tok(0xFF)}), (std::vector<std::string>{kFffd, ""}));
  // C3 then 'a': C3 is held, then replaced when 'a' shows it cannot complete.
  EXPECT_EQ(stream_all(tok, Ids{byte_tok(0xC3), kA}), (std::vector<std::string>{"", kFffd + "a", ""}));
  // A stray continuation byte.
  EXPECT_EQ(stream_all(tok, Ids{kA, byte_tok(0x80), kA}), (std::vector<std::string>{"a", kFffd, "a", ""}));
  // Surrogate encoding ED A0 80: three replacement characters (maximal subparts).
  EXPECT_EQ(joined(stream_all(tok, Ids{byte_tok(0xED), byte_tok(0xA0), byte_tok(0x80)})), kFffd + kFffd + kFffd);
}

TEST(StreamingDetokenizer, TruncatedSequenceAtEndIsFlushed) {
  const Tokenizer tok = make(small_spm_vocab());
  StreamingDetokenizer stream(tok, whole_text());
  EXPECT_EQ(stream.push(kA), "a");
  EXPECT_EQ(stream.push(byte_tok(0xE2)), "");
  EXPECT_EQ(stream.push(byte_tok(0x96)), "");
  EXPECT_TRUE(stream.has_pending());
  EXPECT_EQ(stream.flush(), kFffd);  // never silently dropped
  EXPECT_FALSE(stream.has_pending());
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamingDetokenizer, LeadingSpaceRuleAsDecode) {
  const Tokenizer tok = make(small_spm_vocab());
  // A whole text: the first piece "▁hello" loses its space, as in decode().
  EXPECT_EQ(joined(stream_all(tok, Ids{kMarkHello, kMarkA})), "hello a");
  EXPECT_EQ(tok.decode(Ids{kMarkHello, kMarkA}), "hello a");
  // Default: generated text continuing a prompt keeps it (llama.cpp's output).
  EXPECT_EQ(joined(stream_all(tok, Ids{kMarkHello}, {})), " hello");
  StreamingDetokenizer continuation(tok);
  EXPECT_EQ(continuation.push(kMarkA), " a");
  // After reset() the rule applies again.
  StreamingDetokenizer stream(tok, whole_text());
  EXPECT_EQ(stream.push(kMarkA), "a");
  EXPECT_EQ(stream.push(kMarkA), " a");
  stream.reset();
  EXPECT_EQ(stream.push(kMarkA), "a");
}

TEST(StreamingDetokenizer, SpecialTokensOnlyWhenAsked) {
  const Tokenizer tok = make(small_spm_vocab());
  EXPECT_EQ(joined(stream_all(tok, Ids{1, kMarkHello, 2})), " hello");
  EXPECT_EQ(joined(stream_all(tok, Ids{1, kMarkHello, 2}, whole_text(true))), "<s> hello</s>");
}

// Random id sequences (byte tokens, pieces, specials, invalid ids): the stream
// always equals sanitize_utf8(decode()), for both vocabularies and both modes.
TEST(StreamingDetokenizer, MatchesDecodeOnRandomSequences) {
  const Tokenizer spm = make(small_spm_vocab());
  const Tokenizer bpe = make(small_bpe_vocab("qwen2"));
  std::mt19937 rng(12345);
  for (const Tokenizer* tok : {&spm, &bpe}) {
    std::uniform_int_distribution<int32_t> pick(-2, tok->vocab_size() + 1);
    for (int trial = 0; trial < 2000; ++trial) {
      Ids ids(rng() % 12);
      for (int32_t& id : ids) id = pick(rng);
      for (bool render : {false, true}) {
        DecodeOptions d;
        d.render_special = render;
        const std::vector<std::string> parts = stream_all(*tok, ids, whole_text(render));
        for (const std::string& p : parts) ASSERT_TRUE(is_valid_utf8(p));
        ASSERT_EQ(joined(parts), sanitize_utf8(tok->decode(ids, d))) << "trial " << trial;
      }
    }
  }
}

}  // namespace
}  // namespace kazeia::text
