// The reference models of /work/shared/models: every file parses, and what
// models/README.md documents about each is what the reader finds.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "common/test_data.h"
#include "format/gguf.h"

namespace kazeia::gguf {
namespace {

using ::kazeia::testing::shared_model;

const std::vector<std::string> kModels = {
    "qwen3-tiny-f32.gguf",  "qwen3-tiny-q4_0.gguf", "qwen35-tiny-f32.gguf",  "qwen35-tiny-q4_0.gguf",
    "qwen3-kq-q4_k_m.gguf", "qwen3-kq-q5_k_m.gguf", "qwen3-kq-q6_k.gguf",    "stories260K.gguf",
    "qwen35-chat-q8_0.gguf", "qwen35-mtp-f32.gguf",
};

File open_model(const std::string& name) {
  auto f = File::open(shared_model(name));
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return f.ok() ? std::move(f.value()) : File{};
}

void expect_shape(const File& f, const std::string& tensor, std::vector<uint64_t> dims,
                  std::optional<TensorType> type = std::nullopt) {
  const TensorInfo* t = f.find_tensor(tensor);
  ASSERT_NE(t, nullptr) << f.source_name() << ": no tensor " << tensor;
  EXPECT_EQ(t->dims, dims) << f.source_name() << ": " << tensor;
  if (type) {
    EXPECT_EQ(tensor_type_name(t->type), tensor_type_name(*type)) << f.source_name() << ": " << tensor;
  }
}

void expect_u32(const File& f, const std::string& key, uint32_t want) {
  auto v = f.get_u32(key);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(*v, want) << f.source_name() << ": " << key;
}

void expect_f32(const File& f, const std::string& key, float want) {
  auto v = f.get_f32(key);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_FLOAT_EQ(*v, want) << f.source_name() << ": " << key;
}

size_t array_size(const File& f, const std::string& key) {
  auto a = f.get_array(key);
  EXPECT_TRUE(a.ok()) << a.status().to_string();
  return a.ok() ? (*a)->items.size() : 0;
}

TEST(GgufModels, EveryFileParsesAndTensorsLieInsideIt) {
  KZ_REQUIRE_SHARED_DATA();
  for (const auto& name : kModels) {
    SCOPED_TRACE(name);
    File f = open_model(name);
    EXPECT_EQ(f.file_size(), std::filesystem::file_size(shared_model(name)));
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.data_offset() % f.alignment(), 0u);
    ASSERT_FALSE(f.tensors().empty());
    for (const auto& t : f.tensors()) {
      EXPECT_GE(t.data, f.bytes().data() + f.data_offset());
      EXPECT_LE(t.data + t.n_bytes, f.bytes().data() + f.file_size());
      EXPECT_EQ(t.n_rows() * t.row_bytes(), t.n_bytes) << t.name;
    }
    for (const auto& kv : f.metadata()) EXPECT_FALSE(kv.value.summary().empty());
  }
}

TEST(GgufModels, Qwen3Tiny) {
  KZ_REQUIRE_SHARED_DATA();
  for (const std::string name : {"qwen3-tiny-f32.gguf", "qwen3-tiny-q4_0.gguf"}) {
    SCOPED_TRACE(name);
    File f = open_model(name);
    EXPECT_EQ(f.get_string("general.architecture").value_or(""), "qwen3");
    EXPECT_EQ(f.tensors().size(), 24u);
    expect_u32(f, "qwen3.context_length", 4096);
    expect_u32(f, "qwen3.embedding_length", 64);
    expect_u32(f, "qwen3.block_count", 2);
    expect_u32(f, "qwen3.feed_forward_length", 128);
    expect_u32(f, "qwen3.attention.head_count", 4);
    expect_u32(f, "qwen3.attention.head_count_kv", 2);
    expect_u32(f, "qwen3.attention.key_length", 16);
    expect_f32(f, "qwen3.rope.freq_base", 1e6f);
    expect_f32(f, "qwen3.attention.layer_norm_rms_epsilon", 1e-6f);
    EXPECT_EQ(f.find("qwen3.rope.dimension_count"), nullptr);
    EXPECT_EQ(f.find_tensor("output.weight"), nullptr);  // tied embeddings
    EXPECT_EQ(array_size(f, "tokenizer.ggml.tokens"), 151936u);
    EXPECT_EQ(array_size(f, "tokenizer.ggml.merges"), 151387u);
    EXPECT_EQ(f.get_string("tokenizer.ggml.model").value_or(""), "gpt2");
    expect_u32(f, "tokenizer.ggml.bos_token_id", 151643);
    expect_u32(f, "tokenizer.ggml.eos_token_id", 151645);
    EXPECT_EQ(f.get_bool("tokenizer.ggml.add_bos_token").value_or(true), false);
    auto tokens = f.get_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.ok());
    EXPECT_EQ(*(*tokens)->items[151645].as_string(), "<|im_end|>");
    expect_shape(f, "token_embd.weight", {64, 151936});
    expect_shape(f, "output_norm.weight", {64}, TensorType::F32);
    expect_shape(f, "blk.0.attn_q.weight", {64, 64});
    expect_shape(f, "blk.1.attn_k.weight", {64, 32});
    expect_shape(f, "blk.1.attn_k_norm.weight", {16}, TensorType::F32);
    expect_shape(f, "blk.1.ffn_down.weight", {128, 64});
  }
  File q = open_model("qwen3-tiny-q4_0.gguf");
  expect_u32(q, "general.file_type", 2);
  expect_shape(q, "token_embd.weight", {64, 151936}, TensorType::Q8_0);
  expect_shape(q, "blk.0.attn_q.weight", {64, 64}, TensorType::Q4_0);
}

void expect_qwen35_trunk(const File& f) {
  EXPECT_EQ(f.get_string("general.architecture").value_or(""), "qwen35");
  expect_u32(f, "qwen35.embedding_length", 64);
  expect_u32(f, "qwen35.attention.head_count", 4);
  expect_u32(f, "qwen35.attention.head_count_kv", 2);
  expect_u32(f, "qwen35.attention.key_length", 32);
  expect_u32(f, "qwen35.rope.dimension_count", 8);
  expect_u32(f, "qwen35.ssm.conv_kernel", 4);
  expect_u32(f, "qwen35.ssm.state_size", 16);
  expect_u32(f, "qwen35.ssm.group_count", 2);
  expect_u32(f, "qwen35.ssm.time_step_rank", 4);
  expect_u32(f, "qwen35.ssm.inner_size", 64);
  expect_u32(f, "qwen35.full_attention_interval", 4);
  expect_f32(f, "qwen35.rope.freq_base", 1e7f);
  auto sections = f.get_array("qwen35.rope.dimension_sections");
  ASSERT_TRUE(sections.ok()) << sections.status().to_string();
  std::vector<int64_t> secs;
  for (const auto& v : (*sections)->items) secs.push_back(v.as_int().value_or(-1));
  EXPECT_EQ(secs, (std::vector<int64_t>{2, 1, 1, 0}));
  expect_shape(f, "blk.0.attn_qkv.weight", {64, 128});
  expect_shape(f, "blk.0.attn_gate.weight", {64, 64});
  expect_shape(f, "blk.1.ssm_conv1d.weight", {4, 128}, TensorType::F32);
  expect_shape(f, "blk.2.ssm_a", {4}, TensorType::F32);
  expect_shape(f, "blk.2.ssm_dt.bias", {4}, TensorType::F32);
  expect_shape(f, "blk.0.ssm_beta.weight", {64, 4});
  expect_shape(f, "blk.0.ssm_norm.weight", {16});
  expect_shape(f, "blk.3.attn_q.weight", {64, 256});
  expect_shape(f, "blk.3.attn_output.weight", {128, 64});
  expect_shape(f, "blk.3.attn_q_norm.weight", {32});
  EXPECT_EQ(f.find_tensor("blk.3.attn_qkv.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
}

std::vector<bool> recurrent_layers(const File& f) {
  std::vector<bool> out;
  auto a = f.get_array("qwen35.attention.recurrent_layers");
  EXPECT_TRUE(a.ok()) << a.status().to_string();
  if (!a.ok()) return out;
  EXPECT_EQ((*a)->element_type, ValueType::kBool);
  for (const auto& v : (*a)->items) out.push_back(std::get<bool>(v.v));
  return out;
}

TEST(GgufModels, Qwen35TinyAndChat) {
  KZ_REQUIRE_SHARED_DATA();
  for (const std::string name : {"qwen35-tiny-f32.gguf", "qwen35-tiny-q4_0.gguf", "qwen35-chat-q8_0.gguf"}) {
    SCOPED_TRACE(name);
    File f = open_model(name);
    expect_qwen35_trunk(f);
    EXPECT_EQ(f.tensors().size(), 55u);
    expect_u32(f, "qwen35.block_count", 4);
    EXPECT_EQ(f.find("qwen35.nextn_predict_layers"), nullptr);
    EXPECT_EQ(recurrent_layers(f), (std::vector<bool>{true, true, true, false}));
    EXPECT_EQ(array_size(f, "tokenizer.ggml.tokens"), 151936u);
    expect_shape(f, "token_embd.weight", {64, 151936});
  }
  File chat = open_model("qwen35-chat-q8_0.gguf");
  EXPECT_EQ(chat.get_string("tokenizer.ggml.pre").value_or(""), "qwen35");
  EXPECT_EQ(chat.get_string("tokenizer.chat_template").value_or("").size(), 7756u);
  expect_u32(chat, "general.file_type", 7);
  std::map<std::string_view, int> counts;
  for (const auto& t : chat.tensors()) counts[tensor_type_name(t.type)]++;
  EXPECT_EQ(counts["Q8_0"], 32);
  EXPECT_EQ(counts["F32"], 23);
  File q = open_model("qwen35-tiny-q4_0.gguf");
  expect_shape(q, "blk.0.ssm_alpha.weight", {64, 4}, TensorType::Q4_0);
  expect_shape(q, "blk.0.ssm_a", {4}, TensorType::F32);
}

TEST(GgufModels, Qwen35Mtp) {
  KZ_REQUIRE_SHARED_DATA();
  File f = open_model("qwen35-mtp-f32.gguf");
  expect_qwen35_trunk(f);
  EXPECT_EQ(f.tensors().size(), 70u);
  expect_u32(f, "qwen35.block_count", 5);
  expect_u32(f, "qwen35.nextn_predict_layers", 1);
  EXPECT_EQ(recurrent_layers(f), (std::vector<bool>{true, true, true, false, false}));
  EXPECT_EQ(f.get_string("general.name").value_or(""), "qwen35-mtp-random-seed16");
  expect_shape(f, "token_embd.weight", {64, 4096}, TensorType::F32);
  expect_shape(f, "blk.4.nextn.eh_proj.weight", {128, 64}, TensorType::F32);
  expect_shape(f, "blk.4.nextn.enorm.weight", {64});
  expect_shape(f, "blk.4.nextn.shared_head_norm.weight", {64});
  expect_shape(f, "blk.4.attn_q.weight", {64, 256});
  int blk4 = 0;
  for (const auto& t : f.tensors()) blk4 += t.name.rfind("blk.4.", 0) == 0;
  EXPECT_EQ(blk4, 15);
  EXPECT_EQ(array_size(f, "tokenizer.ggml.tokens"), 4096u);
  EXPECT_EQ(array_size(f, "tokenizer.ggml.merges"), 3831u);
}

TEST(GgufModels, Qwen3KQuants) {
  KZ_REQUIRE_SHARED_DATA();
  struct Case {
    std::string file;
    TensorType main;
    uint32_t file_type;
  };
  for (const Case& c : {Case{"qwen3-kq-q4_k_m.gguf", TensorType::Q4_K, 15},
                        Case{"qwen3-kq-q5_k_m.gguf", TensorType::Q5_K, 17},
                        Case{"qwen3-kq-q6_k.gguf", TensorType::Q6_K, 18}}) {
    SCOPED_TRACE(c.file);
    File f = open_model(c.file);
    EXPECT_EQ(f.get_string("general.architecture").value_or(""), "qwen3");
    EXPECT_EQ(f.get_string("general.name").value_or(""), "qwen3-kq-random-seed11");
    EXPECT_EQ(f.tensors().size(), 24u);
    expect_u32(f, "general.file_type", c.file_type);
    expect_u32(f, "qwen3.embedding_length", 256);
    expect_u32(f, "qwen3.feed_forward_length", 768);
    expect_u32(f, "qwen3.attention.key_length", 64);
    expect_u32(f, "tokenizer.ggml.bos_token_id", 4087);
    expect_u32(f, "tokenizer.ggml.eos_token_id", 4089);
    EXPECT_EQ(array_size(f, "tokenizer.ggml.tokens"), 4096u);
    EXPECT_EQ(array_size(f, "tokenizer.ggml.merges"), 3831u);
    expect_shape(f, "token_embd.weight", {256, 4096}, TensorType::Q6_K);
    expect_shape(f, "output_norm.weight", {256}, TensorType::F32);
    expect_shape(f, "blk.0.attn_q.weight", {256, 256}, c.main);
    expect_shape(f, "blk.0.attn_v.weight", {256, 128}, c.main);
    expect_shape(f, "blk.1.attn_k.weight", {256, 128}, c.main);
    expect_shape(f, "blk.1.ffn_up.weight", {256, 768}, c.main);
    expect_shape(f, "blk.1.attn_v.weight", {256, 128}, TensorType::Q6_K);
    expect_shape(f, "blk.1.ffn_down.weight", {768, 256}, TensorType::Q6_K);
    expect_shape(f, "blk.0.ffn_down.weight", {768, 256}, c.main);
    expect_shape(f, "blk.0.attn_q_norm.weight", {64}, TensorType::F32);
    std::map<std::string_view, int> counts;
    for (const auto& t : f.tensors()) counts[tensor_type_name(t.type)]++;
    EXPECT_EQ(counts["F32"], 9);
    if (c.main == TensorType::Q6_K) {
      EXPECT_EQ(counts["Q6_K"], 15);
    } else {
      EXPECT_EQ(counts[tensor_type_name(c.main)], 12);
      EXPECT_EQ(counts["Q6_K"], 3);
    }
  }
}

TEST(GgufModels, Stories260K) {
  KZ_REQUIRE_SHARED_DATA();
  File f = open_model("stories260K.gguf");
  EXPECT_EQ(f.get_string("general.architecture").value_or(""), "llama");
  EXPECT_EQ(f.tensors().size(), 48u);
  EXPECT_EQ(f.find("general.file_type"), nullptr);
  expect_u32(f, "llama.embedding_length", 64);
  expect_u32(f, "llama.block_count", 5);
  expect_u32(f, "llama.feed_forward_length", 172);
  expect_u32(f, "llama.attention.head_count", 8);
  expect_u32(f, "llama.attention.head_count_kv", 4);
  expect_f32(f, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  expect_u32(f, "tokenizer.ggml.seperator_token_id", 4294967295u);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model").value_or(""), "llama");
  EXPECT_EQ(array_size(f, "tokenizer.ggml.tokens"), 512u);
  EXPECT_EQ(array_size(f, "tokenizer.ggml.scores"), 512u);
  expect_shape(f, "output.weight", {64, 512}, TensorType::F32);
  expect_shape(f, "token_embd.weight", {64, 512}, TensorType::F32);
  expect_shape(f, "blk.4.ffn_gate.weight", {64, 172}, TensorType::F32);
  expect_shape(f, "blk.4.ffn_down.weight", {172, 64}, TensorType::F32);
  expect_shape(f, "blk.0.attn_k.weight", {64, 32}, TensorType::F32);
}

}  // namespace
}  // namespace kazeia::gguf
