// Tokenizer against llama.cpp's reference tokenizations (shared/golden/tokenizer)
// and round trips on the same texts, with the models named in the golden README.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "format/gguf.h"
#include "text/detokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode_utf8.h"

namespace kazeia::text {
namespace {

struct GoldenCase {
  std::string name;
  std::string text;
  std::vector<int32_t> ids_special;
  std::vector<int32_t> ids_plain;
};

std::vector<GoldenCase> read_golden(const std::string& rel) {
  std::vector<GoldenCase> cases;
  std::ifstream in(testing::shared_golden(rel));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    cases.push_back({j.at("name").get<std::string>(), j.at("text").get<std::string>(),
                     j.at("ids_parse_special").get<std::vector<int32_t>>(),
                     j.at("ids_no_parse_special").get<std::vector<int32_t>>()});
  }
  return cases;
}

// Tokenizers are loaded once per model for the whole test program.
const Tokenizer& tokenizer_for(const std::string& model) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto it = cache.find(model);
  if (it == cache.end()) {
    Result<Tokenizer> t = Tokenizer::load(testing::shared_model(model));
    if (!t.ok()) {
      ADD_FAILURE() << "loading " << model << ": " << t.status().to_string();
      std::abort();
    }
    it = cache.emplace(model, std::make_unique<Tokenizer>(std::move(t).value())).first;
  }
  return *it->second;
}

std::string ids_to_string(const std::vector<int32_t>& ids) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < ids.size(); ++i) os << (i ? ", " : "") << ids[i];
  os << "]";
  return os.str();
}

struct GoldenFile {
  const char* file;
  const char* model;
};

// Test names show the file, not the struct's bytes.
void PrintTo(const GoldenFile& g, std::ostream* os) { *os << g.file << " with " << g.model; }

class GoldenTokenizer : public ::testing::TestWithParam<GoldenFile> {};

// Every case, both modes, exact ids. No BOS/EOS: the reference ids were made
// with add_special = false (stories260K included, see the golden README).
TEST_P(GoldenTokenizer, ExactIds) {
  KZ_REQUIRE_SHARED_DATA();
  const GoldenFile& g = GetParam();
  const Tokenizer& tok = tokenizer_for(g.model);
  const std::vector<GoldenCase> cases = read_golden(std::string("tokenizer/") + g.file);
  ASSERT_FALSE(cases.empty()) << g.file;
  int pass_special = 0;
  int pass_plain = 0;
  for (const GoldenCase& c : cases) {
    const std::vector<int32_t> special = tok.encode(c.text, /*parse_special=*/true, /*add_special=*/false);
    const std::vector<int32_t> plain = tok.encode(c.text, /*parse_special=*/false, /*add_special=*/false);
    if (special == c.ids_special) {
      ++pass_special;
    } else {
      ADD_FAILURE() << g.file << " " << c.name << " (parse_special)\n  expected " << ids_to_string(c.ids_special)
                    << "\n  actual   " << ids_to_string(special);
    }
    if (plain == c.ids_plain) {
      ++pass_plain;
    } else {
      ADD_FAILURE() << g.file << " " << c.name << " (no parse_special)\n  expected " << ids_to_string(c.ids_plain)
                    << "\n  actual   " << ids_to_string(plain);
    }
  }
  std::printf("%s with %s: parse_special %d/%zu, no parse_special %d/%zu\n", g.file, g.model, pass_special,
              cases.size(), pass_plain, cases.size());
  EXPECT_EQ(pass_special, static_cast<int>(cases.size())) << g.file;
  EXPECT_EQ(pass_plain, static_cast<int>(cases.size())) << g.file;
}

// decode(encode(s)) == s. parse_special = true with special tokens rendered
// gives the text back for BPE; for SentencePiece a space is inserted after
// every special token, so only the plain mode round-trips there, and only
// thanks to decode dropping the one leading space encode added.
TEST_P(GoldenTokenizer, RoundTrip) {
  KZ_REQUIRE_SHARED_DATA();
  const GoldenFile& g = GetParam();
  const Tokenizer& tok = tokenizer_for(g.model);
  for (const GoldenCase& c : read_golden(std::string("tokenizer/") + g.file)) {
    ASSERT_TRUE(is_valid_utf8(c.text)) << c.name;
    const std::vector<int32_t> plain = tok.encode(c.text, false, false);
    EXPECT_EQ(tok.decode(plain), c.text) << c.name;
    if (tok.kind() == TokenizerKind::kBpe) {
      DecodeOptions render;
      render.render_special = true;
      EXPECT_EQ(tok.decode(tok.encode(c.text, true, false), render), c.text) << c.name;
    }
  }
}

// Streaming one token at a time (and in pairs) yields exactly decode()'s bytes.
TEST_P(GoldenTokenizer, StreamingMatchesDecode) {
  KZ_REQUIRE_SHARED_DATA();
  const GoldenFile& g = GetParam();
  const Tokenizer& tok = tokenizer_for(g.model);
  for (const GoldenCase& c : read_golden(std::string("tokenizer/") + g.file)) {
    for (bool render : {false, true}) {
      DecodeOptions options;
      options.render_special = render;
      const std::string expected = sanitize_utf8(tok.decode(c.ids_special, options));
      StreamingDetokenizer::Options so;
      so.render_special = render;
      so.whole_text = true;
      StreamingDetokenizer stream(tok, so);
      std::string got;
      for (int32_t id : c.ids_special) {
        const std::string part = stream.push(id);
        EXPECT_TRUE(is_valid_utf8(part)) << c.name;
        got += part;
      }
      got += stream.flush();
      EXPECT_EQ(got, expected) << c.name << " render_special=" << render;
    }
  }
}


// The qwen35 regex matters: with the qwen2 regex the same vocabulary gives
// different ids on exactly the 11 strings the golden README lists.
TEST(GoldenQwen35, Qwen2RegexDiffersOnTheListedStrings) {
  KZ_REQUIRE_SHARED_DATA();
  Result<gguf::File> file = gguf::File::open(testing::shared_model("qwen35-chat-q8_0.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  Result<Vocab> vocab = load_vocab_from_gguf(*file);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_EQ(vocab->pre, "qwen35");
  vocab->pre = "qwen2";
  Result<Tokenizer> as_qwen2 = Tokenizer::create(std::move(vocab).value());
  ASSERT_TRUE(as_qwen2.ok()) << as_qwen2.status().to_string();
  std::vector<std::string> differing;
  for (const GoldenCase& c : read_golden("tokenizer/tokenizer_qwen35.jsonl")) {
    if (as_qwen2->encode(c.text, true, false) != c.ids_special) differing.push_back(c.name);
  }
  ASSERT_EQ(differing.size(), 11u);
  EXPECT_EQ(differing[0], "thai");
  for (size_t i = 1; i < differing.size(); ++i) EXPECT_EQ(differing[i].rfind("q35_", 0), 0u) << differing[i];
}

// The logits references start from the first n tokens of their prompt text:
// encoding the text must reproduce them (stories260K: BOS added by the model).
TEST(GoldenLogitsPrompts, TokenIdsArePrefixOfEncodedPrompt) {
  KZ_REQUIRE_SHARED_DATA();
  const std::pair<const char*, const char*> files[] = {
      {"qwen3-tiny-f32.en1.json", "qwen3-tiny-f32.gguf"},
      {"qwen3-tiny-f32.fr17.json", "qwen3-tiny-f32.gguf"},
      {"qwen3-tiny-f32.code200.json", "qwen3-tiny-f32.gguf"},
      {"qwen35-chat-q8_0.fr17.json", "qwen35-chat-q8_0.gguf"},
      {"qwen35-chat-q8_0.code200.json", "qwen35-chat-q8_0.gguf"},
      {"qwen3-kq-q4_k_m.fr.json", "qwen3-kq-q4_k_m.gguf"},
      {"qwen3-kq-q4_k_m.code.json", "qwen3-kq-q4_k_m.gguf"},
      {"stories260K.once5.json", "stories260K.gguf"},
      {"stories260K.story60.json", "stories260K.gguf"},
  };
  for (const auto& [json_name, model] : files) {
    std::ifstream in(testing::shared_golden(std::string("logits/") + json_name));
    ASSERT_TRUE(in.good()) << json_name;
    const nlohmann::json j = nlohmann::json::parse(in);
    const std::vector<int32_t> expected = j.at("token_ids").get<std::vector<int32_t>>();
    const Tokenizer& tok = tokenizer_for(model);
    const std::vector<int32_t> ids = tok.encode(j.at("prompt_text").get<std::string>(), true, true);
    ASSERT_GE(ids.size(), expected.size()) << json_name;
    EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + expected.size()), expected) << json_name;
  }
}

TEST(GoldenSpecialIds, AsInTheModelsReadme) {
  KZ_REQUIRE_SHARED_DATA();
  const Tokenizer& qwen = tokenizer_for("qwen3-tiny-f32.gguf");
  EXPECT_EQ(qwen.vocab_size(), 151936);
  EXPECT_EQ(qwen.kind(), TokenizerKind::kBpe);
  EXPECT_EQ(qwen.pre(), "qwen2");
  EXPECT_EQ(qwen.bos_id(), 151643);
  EXPECT_EQ(qwen.eos_id(), 151645);
  EXPECT_EQ(qwen.pad_id(), 151643);
  EXPECT_FALSE(qwen.add_bos());
  EXPECT_TRUE(qwen.is_eog(151643));  // <|endoftext|>
  EXPECT_TRUE(qwen.is_eog(151645));  // <|im_end|>
  EXPECT_FALSE(qwen.is_eog(151644));  // <|im_start|>
  EXPECT_FALSE(qwen.is_eog(151667));  // <think>
  EXPECT_EQ(qwen.token_type(151667), TokenType::kUserDefined);
  EXPECT_EQ(qwen.token_to_piece(151667), "<think>");
  EXPECT_EQ(qwen.token_to_piece(151644), "");
  EXPECT_EQ(qwen.token_to_piece(151644, true), "<|im_start|>");
  EXPECT_EQ(qwen.token_to_piece(151700, true), "");  // [PAD...], UNUSED
  EXPECT_EQ(qwen.token_to_piece(220), " ");
  EXPECT_EQ(qwen.token_to_piece(198), "\n");

  const Tokenizer& kq = tokenizer_for("qwen3-kq-q4_k_m.gguf");
  EXPECT_EQ(kq.vocab_size(), 4096);
  EXPECT_EQ(kq.eog_ids(), (std::vector<int32_t>{4087, 4089}));

  const Tokenizer& stories = tokenizer_for("stories260K.gguf");
  EXPECT_EQ(stories.kind(), TokenizerKind::kSpm);
  EXPECT_EQ(stories.vocab_size(), 512);
  EXPECT_EQ(stories.bos_id(), 1);
  EXPECT_EQ(stories.eos_id(), 2);
  EXPECT_EQ(stories.unk_id(), 0);
  EXPECT_EQ(stories.pad_id(), kNoToken);  // 4294967295 in the file means none
  EXPECT_TRUE(stories.add_bos());
  EXPECT_TRUE(stories.add_space_prefix());
  EXPECT_TRUE(stories.is_eog(2));
  EXPECT_EQ(stories.encode("Once upon a time", true, true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
}

// ---------------------------------------------------------------------------
// Differential tests against deliberately naive O(n^2) re-statements of the
// two merge rules, on random words, with the real vocabularies.

// Byte-level BPE: repeatedly merge the adjacent pair of lowest rank (leftmost
// on ties), on GPT-2 alphabet strings.
std::vector<int32_t> naive_bpe(const Vocab& v, const std::map<std::pair<std::string, std::string>, int>& ranks,
                               const std::map<std::string, int32_t>& ids, const std::string& word) {
  std::vector<std::string> syms;
  for (unsigned char b : word) syms.push_back(gpt2_encode(std::string(1, static_cast<char>(b))));
  while (syms.size() > 1) {
    int best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      auto it = ranks.find({syms[i], syms[i + 1]});
      if (it != ranks.end() && (best < 0 || it->second < best)) {
        best = it->second;
        at = i;
      }
    }
    if (best < 0) break;
    syms[at] += syms[at + 1];
    syms.erase(syms.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  std::vector<int32_t> out;
  for (const std::string& s : syms) out.push_back(ids.at(s));
  return out;
}

TEST(GoldenDifferential, BpeMatchesNaiveMerging) {
  KZ_REQUIRE_SHARED_DATA();
  Result<gguf::File> file = gguf::File::open(testing::shared_model("qwen3-kq-q4_k_m.gguf"));
  ASSERT_TRUE(file.ok());
  Result<Vocab> vocab = load_vocab_from_gguf(*file);
  ASSERT_TRUE(vocab.ok());
  std::map<std::pair<std::string, std::string>, int> ranks;
  for (size_t r = 0; r < vocab->merges.size(); ++r) {
    const std::string& m = vocab->merges[r];
    const size_t sp = m.find(' ', 1);
    ranks.emplace(std::make_pair(m.substr(0, sp), m.substr(sp + 1)), static_cast<int>(r));
  }
  std::map<std::string, int32_t> ids;
  for (size_t i = 0; i < vocab->tokens.size(); ++i) ids.emplace(vocab->tokens[i], static_cast<int32_t>(i));
  const Tokenizer& tok = tokenizer_for("qwen3-kq-q4_k_m.gguf");
  std::mt19937 rng(7);
  // Letters that merge a lot in English, so long merge chains happen.
  const std::string alphabet = "etaoinshrdlcumwfgypbvk";
  for (int trial = 0; trial < 3000; ++trial) {
    std::string word = trial % 2 ? " " : "";  // " word" is one pre-token too
    const size_t len = 1 + rng() % 40;
    for (size_t k = 0; k < len; ++k) word += alphabet[rng() % (trial % 3 ? alphabet.size() : 4)];
    ASSERT_EQ(tok.encode(word, false, false), naive_bpe(*vocab, ranks, ids, word)) << "'" << word << "'";
  }
}

// SentencePiece: repeatedly merge the adjacent pair whose concatenation is the
// highest-scoring token (leftmost on ties), on the whole escaped text.
std::vector<int32_t> naive_spm(const Vocab& v, const std::map<std::string, int32_t>& ids, const std::string& text) {
  std::string escaped = "\xE2\x96\x81";
  for (char c : text) escaped += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
  std::vector<std::string> syms;
  for (size_t pos = 0; pos < escaped.size();) {
    const size_t len = std::min(utf8_lead_length(static_cast<uint8_t>(escaped[pos])), escaped.size() - pos);
    syms.push_back(escaped.substr(pos, len));
    pos += len;
  }
  while (syms.size() > 1) {
    float best = 0;
    bool found = false;
    size_t at = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      auto it = ids.find(syms[i] + syms[i + 1]);
      if (it != ids.end() && (!found || v.scores[it->second] > best)) {
        best = v.scores[it->second];
        found = true;
        at = i;
      }
    }
    if (!found) break;
    syms[at] += syms[at + 1];
    syms.erase(syms.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  std::vector<int32_t> out;
  for (const std::string& s : syms) {
    auto it = ids.find(s);
    if (it != ids.end()) {
      out.push_back(it->second);
      continue;
    }
    for (unsigned char b : s) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      out.push_back(ids.at(hex));
    }
  }
  return out;
}

TEST(GoldenDifferential, SpmMatchesNaiveMerging) {
  KZ_REQUIRE_SHARED_DATA();
  Result<gguf::File> file = gguf::File::open(testing::shared_model("stories260K.gguf"));
  ASSERT_TRUE(file.ok());
  Result<Vocab> vocab = load_vocab_from_gguf(*file);
  ASSERT_TRUE(vocab.ok());
  std::map<std::string, int32_t> ids;
  for (size_t i = 0; i < vocab->tokens.size(); ++i) ids.emplace(vocab->tokens[i], static_cast<int32_t>(i));
  const Tokenizer& tok = tokenizer_for("stories260K.gguf");
  std::mt19937 rng(11);
  const std::string alphabet = "etaoinshrdlcumwfgyp  .,\xC3\xA9";  // é as two bytes, spaces twice as likely
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const size_t len = 1 + rng() % 60;
    for (size_t k = 0; k < len; ++k) text += alphabet[rng() % alphabet.size()];  // may cut é: invalid UTF-8 too
    ASSERT_EQ(tok.encode(text, false, false), naive_spm(*vocab, ids, text)) << "'" << text << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shared, GoldenTokenizer,
    ::testing::Values(GoldenFile{"tokenizer_qwen3.jsonl", "qwen3-tiny-f32.gguf"},
                      GoldenFile{"tokenizer_qwen35.jsonl", "qwen35-chat-q8_0.gguf"},
                      GoldenFile{"tokenizer_qwen3kq.jsonl", "qwen3-kq-q4_k_m.gguf"},
                      GoldenFile{"tokenizer_stories260K.jsonl", "stories260K.gguf"}),
    [](const ::testing::TestParamInfo<GoldenFile>& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace kazeia::text
