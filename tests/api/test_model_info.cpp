// `kazeia info --json` against the facts that ../shared/models/README.md
// documents for every shared model (independent of our own reader's tables).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "kazeia/model_info.h"

namespace {

using json = nlohmann::json;
using Shape = std::vector<uint64_t>;

struct Expected {
  std::string file;
  std::string arch;
  size_t tensor_count;
  uint64_t size;
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::string> types;
};

json info_json(const std::string& path) {
  auto info = kazeia::inspect_model(path);
  EXPECT_TRUE(info.ok()) << info.status().to_string();
  if (!info.ok()) return json();
  return json::parse(kazeia::format_model_info_json(*info));
}

std::map<std::string, json> tensors_by_name(const json& j) {
  std::map<std::string, json> out;
  for (const auto& t : j["tensors"]) out[t["name"].get<std::string>()] = t;
  return out;
}

const std::map<std::string, Shape> kQwen35TinyShapes = {
    {"token_embd.weight", {64, 151936}}, {"output_norm.weight", {64}},
    {"blk.0.attn_qkv.weight", {64, 128}}, {"blk.0.attn_gate.weight", {64, 64}},
    {"blk.0.ssm_conv1d.weight", {4, 128}}, {"blk.0.ssm_dt.bias", {4}}, {"blk.0.ssm_a", {4}},
    {"blk.0.ssm_beta.weight", {64, 4}}, {"blk.0.ssm_alpha.weight", {64, 4}},
    {"blk.0.ssm_norm.weight", {16}}, {"blk.2.ssm_out.weight", {64, 64}},
    {"blk.3.attn_q.weight", {64, 256}}, {"blk.3.attn_k.weight", {64, 64}},
    {"blk.3.attn_output.weight", {128, 64}}, {"blk.3.attn_q_norm.weight", {32}},
    {"blk.3.ffn_down.weight", {128, 64}}, {"blk.1.post_attention_norm.weight", {64}}};

const std::map<std::string, Shape> kQwen3TinyShapes = {
    {"token_embd.weight", {64, 151936}}, {"output_norm.weight", {64}},
    {"blk.0.attn_q.weight", {64, 64}}, {"blk.0.attn_k.weight", {64, 32}},
    {"blk.1.attn_v.weight", {64, 32}}, {"blk.1.attn_output.weight", {64, 64}},
    {"blk.0.attn_q_norm.weight", {16}}, {"blk.0.ffn_gate.weight", {64, 128}},
    {"blk.1.ffn_down.weight", {128, 64}}};

const std::map<std::string, Shape> kQwen3KqShapes = {
    {"token_embd.weight", {256, 4096}}, {"blk.0.attn_q.weight", {256, 256}},
    {"blk.0.attn_k.weight", {256, 128}}, {"blk.1.ffn_down.weight", {768, 256}},
    {"blk.1.attn_k_norm.weight", {64}}};

std::vector<Expected> expected_models() {
  std::vector<Expected> e;
  e.push_back({"qwen3-tiny-f32.gguf", "qwen3", 24, 45126144, kQwen3TinyShapes,
               {{"token_embd.weight", "F32"}, {"blk.0.attn_q.weight", "F32"}}});
  e.push_back({"qwen3-tiny-q4_0.gguf", "qwen3", 24, 16308768, kQwen3TinyShapes,
               {{"token_embd.weight", "Q8_0"}, {"blk.0.attn_q.weight", "Q4_0"},
                {"blk.0.attn_norm.weight", "F32"}}});
  e.push_back({"qwen35-tiny-f32.gguf", "qwen35", 55, 45568064, kQwen35TinyShapes, {}});
  e.push_back({"qwen35-tiny-q4_0.gguf", "qwen35", 55, 16379424, kQwen35TinyShapes,
               {{"token_embd.weight", "Q8_0"}, {"blk.0.ssm_beta.weight", "Q4_0"},
                {"blk.0.ssm_a", "F32"}, {"blk.0.ssm_conv1d.weight", "F32"}}});
  e.push_back({"qwen35-chat-q8_0.gguf", "qwen35", 55, 16473952, kQwen35TinyShapes,
               {{"token_embd.weight", "Q8_0"}, {"blk.0.ssm_alpha.weight", "Q8_0"}}});
  auto mtp = kQwen35TinyShapes;
  mtp["token_embd.weight"] = {64, 4096};
  mtp["blk.4.nextn.eh_proj.weight"] = {128, 64};
  mtp["blk.4.nextn.enorm.weight"] = {64};
  mtp["blk.4.attn_q.weight"] = {64, 256};
  e.push_back({"qwen35-mtp-f32.gguf", "qwen35", 70, 2186368, mtp, {}});
  std::map<std::string, std::string> q4km = {
      {"token_embd.weight", "Q6_K"}, {"blk.0.attn_v.weight", "Q4_K"}, {"blk.1.attn_v.weight", "Q6_K"},
      {"blk.1.ffn_down.weight", "Q6_K"}, {"blk.0.ffn_down.weight", "Q4_K"}, {"output_norm.weight", "F32"}};
  e.push_back({"qwen3-kq-q4_k_m.gguf", "qwen3", 24, 1941376, kQwen3KqShapes, q4km});
  e.push_back({"qwen3-kq-q5_k_m.gguf", "qwen3", 24, 2109312, kQwen3KqShapes,
               {{"blk.0.attn_q.weight", "Q5_K"}, {"blk.1.attn_v.weight", "Q6_K"}}});
  e.push_back({"qwen3-kq-q6_k.gguf", "qwen3", 24, 2287744, kQwen3KqShapes, {{"blk.0.attn_q.weight", "Q6_K"}}});
  e.push_back({"stories260K.gguf", "llama", 48, 1185376,
               {{"token_embd.weight", {64, 512}}, {"output.weight", {64, 512}},
                {"blk.4.ffn_gate.weight", {64, 172}}, {"blk.0.attn_k.weight", {64, 32}}},
               {{"output.weight", "F32"}}});
  return e;
}

TEST(ModelInfo, SharedModelsMatchTheirDocumentation) {
  KZ_REQUIRE_SHARED_DATA();
  for (const auto& e : expected_models()) {
    SCOPED_TRACE(e.file);
    json j = info_json(kazeia::testing::shared_model(e.file));
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["architecture"], e.arch);
    EXPECT_EQ(j["tensor_count"], e.tensor_count);
    EXPECT_EQ(j["tensors"].size(), e.tensor_count);
    EXPECT_EQ(j["file_size"], e.size);
    auto tensors = tensors_by_name(j);
    for (const auto& [name, shape] : e.shapes) {
      ASSERT_TRUE(tensors.count(name)) << name;
      EXPECT_EQ(tensors[name]["shape"].get<Shape>(), shape) << name;
    }
    for (const auto& [name, type] : e.types) {
      ASSERT_TRUE(tensors.count(name)) << name;
      EXPECT_EQ(tensors[name]["type"], type) << name;
    }
    // The parameter count is the sum of the shapes' products.
    uint64_t params = 0;
    for (const auto& t : j["tensors"]) {
      uint64_t n = 1;
      for (auto d : t["shape"]) n *= d.get<uint64_t>();
      params += n;
    }
    EXPECT_EQ(j["parameters"], params);
  }
}

TEST(ModelInfo, Qwen35HyperparametersAndTokenizer) {
  KZ_REQUIRE_SHARED_DATA();
  json j = info_json(kazeia::testing::shared_model("qwen35-tiny-q4_0.gguf"));
  const json& md = j["metadata"];
  EXPECT_EQ(md["qwen35.embedding_length"], 64);
  EXPECT_EQ(md["qwen35.attention.head_count_kv"], 2);
  EXPECT_EQ(md["qwen35.ssm.conv_kernel"], 4);
  EXPECT_EQ(md["qwen35.attention.recurrent_layers"], json::parse("[true,true,true,false]"));
  EXPECT_EQ(md["qwen35.rope.dimension_sections"], json::parse("[2,1,1,0]"));
  EXPECT_EQ(j["file_type"], 2);
  EXPECT_EQ(j["file_type_name"], "Q4_0");
  EXPECT_EQ(j["tokenizer"]["model"], "gpt2");
  EXPECT_EQ(j["tokenizer"]["pre"], "qwen2");
  EXPECT_EQ(j["tokenizer"]["vocab_size"], 151936);
  EXPECT_EQ(j["tokenizer"]["merges"], 151387);
  EXPECT_EQ(j["tokenizer"]["special"]["eos"]["id"], 151645);
  EXPECT_EQ(j["tokenizer"]["special"]["eos"]["text"], "<|im_end|>");
  EXPECT_EQ(j["tokenizer"]["add_bos"], false);
  EXPECT_EQ(j["chat_template"], true);
  // Long arrays are summarised unless asked for in full.
  EXPECT_EQ(md["tokenizer.ggml.tokens"]["length"], 151936);
}

TEST(ModelInfo, StoriesHasNoFileTypeAndNoTemplate) {
  KZ_REQUIRE_SHARED_DATA();
  json j = info_json(kazeia::testing::shared_model("stories260K.gguf"));
  EXPECT_TRUE(j["file_type"].is_null());
  EXPECT_EQ(j["chat_template"], false);
  EXPECT_EQ(j["tokenizer"]["model"], "llama");
  EXPECT_EQ(j["tokenizer"]["special"]["bos"]["text"], "<s>");
  EXPECT_EQ(j["metadata"]["llama.rope.dimension_count"], 8);
}

TEST(ModelInfo, MissingFileIsAnErrorNamingThePath) {
  auto info = kazeia::inspect_model("/nonexistent/model.gguf");
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("/nonexistent/model.gguf"), std::string::npos);
}

}  // namespace
