// Chat templates against llama.cpp's renderings: every line of
// golden/chat_template/*.jsonl must come out byte for byte, with the
// template read from the GGUF through our reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/test_data.h"
#include "format/gguf.h"
#include "text/chat_template.h"

namespace kazeia::text {
namespace {

using json = nlohmann::ordered_json;
using kazeia::testing::shared_golden;
using kazeia::testing::shared_model;

// Control characters made visible so a mismatch reads on one line.
std::string visible(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// Where two renderings part, with 60 bytes of context on each side.
std::string describe_mismatch(const std::string& got, const std::string& want) {
  size_t k = 0;
  while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
  const size_t from = k > 60 ? k - 60 : 0;
  return "first difference at byte " + std::to_string(k) + " (got " + std::to_string(got.size()) +
         " bytes, want " + std::to_string(want.size()) + ")\n  got:  ..." + visible(got.substr(from, 120)) +
         "\n  want: ..." + visible(want.substr(from, 120)) + "\n  full got:  " + visible(got) +
         "\n  full want: " + visible(want);
}

struct GoldenCount {
  int pass = 0;
  int total = 0;
};

GoldenCount run_golden(const ChatTemplate& tmpl, const std::string& path) {
  GoldenCount count;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json entry = json::parse(line);
    const std::string name = entry.value("name", "?");
    const std::string want = entry.at("rendered").get<std::string>();
    ++count.total;
    auto got = tmpl.render(entry.at("request"));
    if (!got.ok()) {
      ADD_FAILURE() << name << ": render failed: " << got.status().to_string();
      continue;
    }
    if (*got == want) {
      ++count.pass;
    } else {
      ADD_FAILURE() << name << ": " << describe_mismatch(*got, want);
    }
  }
  return count;
}

ChatTemplate load(const std::string& model) {
  auto file = gguf::File::open(shared_model(model));
  EXPECT_TRUE(file.ok()) << model << ": " << file.status().to_string();
  if (!file.ok()) return ChatTemplate::from_source("");
  return ChatTemplate::from_gguf(*file);
}

void expect_golden(const std::string& model, const std::string& golden, ChatTemplateFamily family,
                   int expected_lines) {
  const ChatTemplate tmpl = load(model);
  EXPECT_FALSE(tmpl.is_fallback()) << model << ": " << (tmpl.warnings().empty() ? "" : tmpl.warnings()[0]);
  EXPECT_EQ(tmpl.family(), family) << model;
  const GoldenCount c = run_golden(tmpl, shared_golden("chat_template/" + golden));
  std::printf("[ golden   ] %s with %s: %d/%d byte-exact\n", golden.c_str(), model.c_str(), c.pass, c.total);
  EXPECT_EQ(c.total, expected_lines);
  EXPECT_EQ(c.pass, c.total);
}

TEST(ChatTemplateGolden, Qwen3AllLinesByteExact) {
  KZ_REQUIRE_SHARED_DATA();
  expect_golden("qwen3-tiny-f32.gguf", "chat_template_qwen3.jsonl", ChatTemplateFamily::kQwen3, 12);
  const ChatTemplate tmpl = load("qwen3-tiny-f32.gguf");
  EXPECT_EQ(tmpl.bos_token(), "<|endoftext|>");
  EXPECT_EQ(tmpl.eos_token(), "<|im_end|>");
  EXPECT_FALSE(tmpl.supports_typed_content());  // Qwen3's template prints string content only
}

TEST(ChatTemplateGolden, Qwen35AllLinesByteExact) {
  KZ_REQUIRE_SHARED_DATA();
  expect_golden("qwen35-chat-q8_0.gguf", "chat_template_qwen35.jsonl", ChatTemplateFamily::kQwen35, 16);
  EXPECT_TRUE(load("qwen35-chat-q8_0.gguf").supports_typed_content());
}

// The same templates ship in the other model files; they must render alike.
TEST(ChatTemplateGolden, OtherModelsCarryTheSameTemplates) {
  KZ_REQUIRE_SHARED_DATA();
  const std::string qwen3 = load("qwen3-tiny-f32.gguf").source();
  for (const char* model : {"qwen3-kq-q4_k_m.gguf", "qwen3-kq-q5_k_m.gguf", "qwen3-kq-q6_k.gguf"}) {
    SCOPED_TRACE(model);
    EXPECT_EQ(load(model).source(), qwen3);
    expect_golden(model, "chat_template_qwen3.jsonl", ChatTemplateFamily::kQwen3, 12);
  }
  EXPECT_EQ(load("qwen35-mtp-f32.gguf").source(), load("qwen35-chat-q8_0.gguf").source());
  expect_golden("qwen35-mtp-f32.gguf", "chat_template_qwen35.jsonl", ChatTemplateFamily::kQwen35, 16);
}

// A model without a template (stories260K) falls back to ChatML, with a warning.
TEST(ChatTemplateGolden, ModelWithoutTemplateFallsBack) {
  KZ_REQUIRE_SHARED_DATA();
  const ChatTemplate tmpl = load("stories260K.gguf");
  EXPECT_TRUE(tmpl.is_fallback());
  ASSERT_FALSE(tmpl.warnings().empty());
  EXPECT_NE(tmpl.warnings()[0].find("no tokenizer.chat_template"), std::string::npos);
  auto out = tmpl.render(json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(*out, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace
}  // namespace kazeia::text
