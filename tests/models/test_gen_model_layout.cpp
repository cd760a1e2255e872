// Generated models have the layout of the real files: tensor names and shapes
// as ../shared/models/README.md documents them (the expected lists are built
// here from the README's formulas, not from the generator's tables),
// per-tensor types as llama-quantize picks them (the README's tables, hand-
// computed cases, and the shared files themselves), and metadata keys with
// the value types of the shared files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "common/test_data.h"
#include "format/gguf.h"
#include "models/gen_model_test_util.h"
#include "models/test_model_generator.h"

namespace kazeia::gen {
namespace {

using ::kazeia::gen::test_util::open;
using ::kazeia::gen::test_util::preset;
using ::kazeia::gen::test_util::work_dir;
using ::kazeia::testing::shared_model;
using Shapes = std::map<std::string, std::vector<uint64_t>>;

// ---- Expected layouts, transcribed from the README ------------------------------

struct Dims {
  Dims(uint64_t e, uint64_t l, uint64_t f, uint64_t h, uint64_t hkv, uint64_t d, uint64_t v)
      : E(e), L(l), F(f), H(h), Hkv(hkv), D(d), V(v) {}
  uint64_t E, L, F, H, Hkv, D, V;  // embd, layers, FFN, heads, kv heads, head dim, vocab
  bool tied = true;
  // qwen35
  uint64_t conv = 4, S = 16, G = 2, R = 4;
  std::vector<bool> recurrent;  // trunk
  uint64_t mtp = 0;
};

Shapes expected_llama(const Dims& d) {
  Shapes s{{"token_embd.weight", {d.E, d.V}}, {"output_norm.weight", {d.E}}};
  if (!d.tied) s["output.weight"] = {d.E, d.V};
  for (uint64_t i = 0; i < d.L; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    s[b + "attn_norm.weight"] = {d.E};
    s[b + "attn_q.weight"] = {d.E, d.H * d.D};
    s[b + "attn_k.weight"] = {d.E, d.Hkv * d.D};
    s[b + "attn_v.weight"] = {d.E, d.Hkv * d.D};
    s[b + "attn_output.weight"] = {d.H * d.D, d.E};
    s[b + "ffn_norm.weight"] = {d.E};
    s[b + "ffn_gate.weight"] = {d.E, d.F};
    s[b + "ffn_up.weight"] = {d.E, d.F};
    s[b + "ffn_down.weight"] = {d.F, d.E};
  }
  return s;
}

Shapes expected_qwen3(const Dims& d) {
  Shapes s = expected_llama(d);
  for (uint64_t i = 0; i < d.L; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    s[b + "attn_q_norm.weight"] = {d.D};
    s[b + "attn_k_norm.weight"] = {d.D};
  }
  return s;
}

// README "qwen35-tiny" and "qwen35-mtp".
Shapes expected_qwen35(const Dims& d) {
  Shapes s{{"token_embd.weight", {d.E, d.V}}, {"output_norm.weight", {d.E}}};
  if (!d.tied) s["output.weight"] = {d.E, d.V};
  for (uint64_t i = 0; i < d.L + d.mtp; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    s[b + "attn_norm.weight"] = {d.E};
    s[b + "post_attention_norm.weight"] = {d.E};
    s[b + "ffn_gate.weight"] = {d.E, d.F};
    s[b + "ffn_up.weight"] = {d.E, d.F};
    s[b + "ffn_down.weight"] = {d.F, d.E};
    if (i < d.L && d.recurrent[i]) {
      const uint64_t qkv = d.G * d.S + d.G * d.S + d.R * d.S;  // q | k | v
      s[b + "attn_qkv.weight"] = {d.E, qkv};
      s[b + "attn_gate.weight"] = {d.E, d.R * d.S};
      s[b + "ssm_conv1d.weight"] = {d.conv, qkv};
      s[b + "ssm_dt.bias"] = {d.R};
      s[b + "ssm_a"] = {d.R};
      s[b + "ssm_beta.weight"] = {d.E, d.R};
      s[b + "ssm_alpha.weight"] = {d.E, d.R};
      s[b + "ssm_norm.weight"] = {d.S};
      s[b + "ssm_out.weight"] = {d.R * d.S, d.E};
    } else {
      s[b + "attn_q.weight"] = {d.E, 2 * d.H * d.D};  // query + output gate per head
      s[b + "attn_k.weight"] = {d.E, d.Hkv * d.D};
      s[b + "attn_v.weight"] = {d.E, d.Hkv * d.D};
      s[b + "attn_output.weight"] = {d.H * d.D, d.E};
      s[b + "attn_q_norm.weight"] = {d.D};
      s[b + "attn_k_norm.weight"] = {d.D};
    }
    if (i >= d.L) {
      s[b + "nextn.eh_proj.weight"] = {2 * d.E, d.E};
      s[b + "nextn.enorm.weight"] = {d.E};
      s[b + "nextn.hnorm.weight"] = {d.E};
      s[b + "nextn.shared_head_norm.weight"] = {d.E};
    }
  }
  return s;
}

// ---- Helpers ----------------------------------------------------------------------


std::string write(GenModelConfig c, GenFileType type, const std::string& file) {
  c.file_type = type;
  const std::string path = work_dir() + "/gen_layout_" + file;
  auto r = write_test_model(c, path);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return path;
}

Shapes shapes_of(const gguf::File& f) {
  Shapes s;
  for (const auto& t : f.tensors()) s[t.name] = t.dims;
  return s;
}

std::map<std::string, std::string> types_of(const gguf::File& f) {
  std::map<std::string, std::string> m;
  for (const auto& t : f.tensors()) m[t.name] = std::string(tensor_type_name(t.type));
  return m;
}

void expect_shapes(const gguf::File& f, const Shapes& want) {
  const Shapes got = shapes_of(f);
  for (const auto& [name, dims] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      ADD_FAILURE() << f.source_name() << ": missing tensor " << name;
      continue;
    }
    EXPECT_EQ(it->second, dims) << f.source_name() << ": " << name;
  }
  for (const auto& [name, dims] : got)
    EXPECT_TRUE(want.count(name)) << f.source_name() << ": unexpected tensor " << name;
}

// rule(name, dims): the type the README / llama-quantize facts give a tensor.
void expect_types(const gguf::File& f, const std::function<std::string(const std::string&, const std::vector<uint64_t>&)>& rule) {
  for (const auto& t : f.tensors())
    EXPECT_EQ(std::string(tensor_type_name(t.type)), rule(t.name, t.dims)) << f.source_name() << ": " << t.name;
}

bool is_vector_or_conv(const std::string& name, const std::vector<uint64_t>& dims) {
  return dims.size() == 1 || name.find("ssm_conv1d") != std::string::npos;
}

// Every key of `ref` starting with prefix exists in `ours` with the same GGUF
// type (arrays: the same element type), and `ours` has no other such keys;
// `missing` / `extra` list the documented exceptions.
void expect_same_key_types(const gguf::File& ours, const gguf::File& ref, const std::string& prefix,
                           const std::set<std::string>& missing = {}, const std::set<std::string>& extra = {}) {
  for (const auto& kv : ref.metadata()) {
    if (!kv.key.starts_with(prefix)) continue;
    const gguf::Value* v = ours.find(kv.key);
    if (v == nullptr) {
      EXPECT_TRUE(missing.count(kv.key)) << ours.source_name() << ": lacks " << kv.key << " of " << ref.source_name();
      continue;
    }
    EXPECT_EQ(v->type(), kv.value.type()) << kv.key << ": " << gguf::value_type_name(v->type()) << " vs "
                                          << gguf::value_type_name(kv.value.type());
    if (v->as_array() && kv.value.as_array()) {
      EXPECT_EQ(v->as_array()->element_type, kv.value.as_array()->element_type) << kv.key;
    }
  }
  for (const auto& kv : ours.metadata()) {
    if (kv.key.starts_with(prefix) && ref.find(kv.key) == nullptr) {
      EXPECT_TRUE(extra.count(kv.key)) << ours.source_name() << ": key " << kv.key << " is not in " << ref.source_name();
    }
  }
}

// ---- Shapes ---------------------------------------------------------------------------

TEST(GenModelLayout, TinyPresetsHaveTheReadmeShapes) {
  const std::vector<GenFileType> types = {GenFileType::kF32, GenFileType::kF16, GenFileType::kQ4_0, GenFileType::kQ8_0};
  for (GenFileType type : types) {
    SCOPED_TRACE(std::string(gen_file_type_info(type).name));
    const std::string tn(gen_file_type_info(type).name);
    // README "qwen3-tiny" with a 4,096-token vocabulary.
    expect_shapes(open(write(preset("tiny-qwen3"), type, "q3_" + tn + ".gguf")),
                  expected_qwen3({64, 2, 128, 4, 2, 16, 4096}));
    // README "stories260K" (FFN 192 instead of 172, 4 layers).
    Dims llama{64, 4, 192, 8, 4, 8, 512};
    llama.tied = false;
    expect_shapes(open(write(preset("tiny-llama"), type, "llama_" + tn + ".gguf")), expected_llama(llama));
    // README "qwen35-tiny" / "qwen35-mtp".
    Dims q35{64, 4, 128, 4, 2, 32, 4096};
    q35.recurrent = {true, true, true, false};
    expect_shapes(open(write(preset("tiny-qwen35"), type, "q35_" + tn + ".gguf")), expected_qwen35(q35));
    GenModelConfig mtp = preset("tiny-qwen35");
    mtp.nextn_predict_layers = 1;
    q35.mtp = 1;
    expect_shapes(open(write(mtp, type, "q35mtp_" + tn + ".gguf")), expected_qwen35(q35));
  }
}

TEST(GenModelLayout, KQuantPresetsHaveShapesWithNe0MultipleOf256) {
  Dims q3{256, 2, 768, 4, 2, 64, 4096};  // README "qwen3-kq"
  const gguf::File f = open(write(preset("tiny-qwen3-k"), GenFileType::kQ4_K_M, "q3k.gguf"));
  expect_shapes(f, expected_qwen3(q3));
  Dims q35{256, 4, 768, 4, 2, 64, 4096};
  q35.S = 64;
  q35.recurrent = {true, true, true, false};
  GenModelConfig c = preset("tiny-qwen35-k");
  c.nextn_predict_layers = 1;
  q35.mtp = 1;
  const gguf::File g = open(write(c, GenFileType::kQ6_K, "q35k.gguf"));
  expect_shapes(g, expected_qwen35(q35));
  for (const gguf::File* file : {&f, &g})
    for (const auto& t : file->tensors())
      if (t.dims.size() == 2 && t.name.find("ssm_conv1d") == std::string::npos) {
        EXPECT_EQ(t.dims[0] % 256, 0u) << t.name;
      }
}

// The big presets: plan only (no multi-GB writes in unit tests).
TEST(GenModelLayout, RealSizedPresetsPlanTheDocumentedShapes) {
  struct Case { std::string preset; std::function<Shapes()> want; uint64_t params_min, params_max; };
  const std::vector<bool> pattern24 = [] { std::vector<bool> p; for (int i = 0; i < 24; ++i) p.push_back((i + 1) % 4 != 0); return p; }();
  const std::vector<bool> pattern32 = [] { std::vector<bool> p; for (int i = 0; i < 32; ++i) p.push_back((i + 1) % 4 != 0); return p; }();
  std::vector<Case> cases = {
      {"qwen3-0.6b", [] { return expected_qwen3({1024, 28, 3072, 16, 8, 128, 151936}); }, 590'000'000, 610'000'000},
      {"qwen3-4b", [] { return expected_qwen3({2560, 36, 9728, 32, 8, 128, 151936}); }, 3'900'000'000, 4'100'000'000},
      {"qwen35-0.8b", [&] { Dims d{1024, 24, 3584, 8, 2, 256, 248320}; d.S = 128; d.G = 16; d.R = 16; d.recurrent = pattern24; return expected_qwen35(d); },
       700'000'000, 800'000'000},
      {"qwen35-4b", [&] { Dims d{2560, 32, 9216, 16, 4, 256, 248320}; d.S = 128; d.G = 16; d.R = 32; d.recurrent = pattern32; return expected_qwen35(d); },
       4'000'000'000, 4'400'000'000},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.preset);
    auto resolved = resolve_gen_config(preset(k.preset));
    ASSERT_TRUE(resolved.ok()) << resolved.status().to_string();
    Shapes got;
    uint64_t params = 0;
    for (const auto& t : plan_tensors(*resolved)) {
      got[t.name] = t.dims;
      uint64_t n = 1;
      for (auto d : t.dims) n *= d;
      params += n;
    }
    EXPECT_EQ(got, k.want());
    EXPECT_GE(params, k.params_min);
    EXPECT_LE(params, k.params_max);
  }
  auto q35 = resolve_gen_config(preset("qwen35-0.8b"));
  ASSERT_TRUE(q35.ok());
  EXPECT_EQ(q35->rope_dims, 64u);  // partial_rotary_factor 0.25 of 256
  EXPECT_EQ(q35->rope_sections, (std::array<int32_t, 4>{11, 11, 10, 0}));
  EXPECT_EQ(q35->ssm_inner_size, 2048u);
  auto q35_4b = resolve_gen_config(preset("qwen35-4b"));
  ASSERT_TRUE(q35_4b.ok());
  EXPECT_EQ(q35_4b->ssm_inner_size, 4096u);
}

// ---- Types ------------------------------------------------------------------------------

TEST(GenModelLayout, FloatFileTypesStoreEveryMatrixInTheirType) {
  for (auto [type, name] : {std::pair{GenFileType::kF32, "F32"}, {GenFileType::kF16, "F16"}, {GenFileType::kBF16, "BF16"}}) {
    const std::string n = name;
    const auto rule = [&](const std::string& t, const std::vector<uint64_t>& d) {
      return is_vector_or_conv(t, d) ? std::string("F32") : n;  // README: norms, ssm_a, dt.bias, conv1d F32
    };
    GenModelConfig c = preset("tiny-qwen35");
    c.nextn_predict_layers = 1;
    expect_types(open(write(c, type, "float_q35_" + n + ".gguf")), rule);
    expect_types(open(write(preset("tiny-llama"), type, "float_llama_" + n + ".gguf")), rule);
  }
}

TEST(GenModelLayout, LegacyQuantTypesFollowTheSharedFiles) {
  // README: qwen3-tiny-q4_0 / qwen35-tiny-q4_0: 2-D weights Q4_0 (incl.
  // ssm_beta/ssm_alpha), token_embd Q8_0 (ne0 = 64 is no multiple of 256),
  // norms, ssm_a, ssm_dt.bias, ssm_conv1d F32.
  for (GenFileType type : {GenFileType::kQ4_0, GenFileType::kQ4_1, GenFileType::kQ5_0, GenFileType::kQ5_1}) {
    const std::string base(tensor_type_name(gen_file_type_info(type).base));
    const auto rule = [&](const std::string& t, const std::vector<uint64_t>& d) {
      if (is_vector_or_conv(t, d)) return std::string("F32");
      return t == "token_embd.weight" ? std::string("Q8_0") : base;
    };
    expect_types(open(write(preset("tiny-qwen3"), type, "legacy_q3.gguf")), rule);
    expect_types(open(write(preset("tiny-qwen35"), type, "legacy_q35.gguf")), rule);
  }
  // README qwen35-chat-q8_0: every 2-D weight Q8_0, token_embd too.
  expect_types(open(write(preset("tiny-qwen35"), GenFileType::kQ8_0, "q8_q35.gguf")),
               [](const std::string& t, const std::vector<uint64_t>& d) {
                 return is_vector_or_conv(t, d) ? std::string("F32") : std::string("Q8_0");
               });
  // A tied embedding whose ne0 is a multiple of 256 becomes Q6_K (the output
  // rule); an untied one keeps the base type and output.weight gets the rule.
  expect_types(open(write(preset("tiny-llama-k"), GenFileType::kQ4_0, "q4_llamak.gguf")),
               [](const std::string& t, const std::vector<uint64_t>& d) {
                 if (d.size() == 1) return std::string("F32");
                 return t == "output.weight" ? std::string("Q6_K") : std::string("Q4_0");
               });
  expect_types(open(write(preset("tiny-llama"), GenFileType::kQ4_0, "q4_llama.gguf")),
               [](const std::string& t, const std::vector<uint64_t>& d) {
                 if (d.size() == 1) return std::string("F32");
                 return t == "output.weight" ? std::string("Q8_0") : std::string("Q4_0");  // Q6_K falls back
               });
}

// The README's per-tensor table of the qwen3-kq files, for our files of the
// same shapes.
TEST(GenModelLayout, KQuantMixesMatchTheReadmeTable) {
  const auto kq_rule = [](const std::string& mixed, const std::string& more) {
    return [=](const std::string& t, const std::vector<uint64_t>& d) {
      if (d.size() == 1) return std::string("F32");
      if (t == "token_embd.weight" || t == "blk.1.attn_v.weight" || t == "blk.1.ffn_down.weight") return more;
      return mixed;
    };
  };
  expect_types(open(write(preset("tiny-qwen3-k"), GenFileType::kQ4_K_M, "kq_q4km.gguf")), kq_rule("Q4_K", "Q6_K"));
  expect_types(open(write(preset("tiny-qwen3-k"), GenFileType::kQ5_K_M, "kq_q5km.gguf")), kq_rule("Q5_K", "Q6_K"));
  expect_types(open(write(preset("tiny-qwen3-k"), GenFileType::kQ6_K, "kq_q6k.gguf")), kq_rule("Q6_K", "Q6_K"));
}

// use_more_bits(i, n) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2, worked
// out by hand: n = 8 -> layers 0, 3, 6, 7; n = 5 (4 + MTP) -> 2, 4.
TEST(GenModelLayout, KQuantMixGivesMoreBitsToTheDocumentedLayers) {
  GenModelConfig c = preset("tiny-qwen3-k");
  c.n_layer = 8;
  const std::set<std::string> more8 = {"0", "3", "6", "7"};
  expect_types(open(write(c, GenFileType::kQ4_K_M, "more8.gguf")), [&](const std::string& t, const std::vector<uint64_t>& d) {
    if (d.size() == 1) return std::string("F32");
    if (t == "token_embd.weight") return std::string("Q6_K");
    const std::string layer = t.substr(4, t.find('.', 4) - 4);
    const bool sensitive = t.ends_with("attn_v.weight") || t.ends_with("ffn_down.weight");
    return sensitive && more8.count(layer) ? std::string("Q6_K") : std::string("Q4_K");
  });
  GenModelConfig q = preset("tiny-qwen35-k");
  q.nextn_predict_layers = 1;
  const std::set<std::string> more5 = {"2", "4"};
  expect_types(open(write(q, GenFileType::kQ5_K_M, "more5.gguf")), [&](const std::string& t, const std::vector<uint64_t>& d) {
    if (is_vector_or_conv(t, d)) return std::string("F32");
    if (t == "token_embd.weight") return std::string("Q6_K");
    const std::string layer = t.substr(4, t.find('.', 4) - 4);
    // attn_qkv counts as attn_v (llama-quant's category_is_attn_v).
    const bool sensitive = t.ends_with("attn_v.weight") || t.ends_with("attn_qkv.weight") || t.ends_with("ffn_down.weight");
    return sensitive && more5.count(layer) ? std::string("Q6_K") : std::string("Q5_K");
  });
}

// ne0 = 64 / 128 cannot hold 256-blocks: llama-quantize's fallbacks
// Q4_K -> Q5_0, Q6_K -> Q8_0, and Q8_0 for the output.
TEST(GenModelLayout, KQuantMixFallsBackForNarrowRows) {
  expect_types(open(write(preset("tiny-qwen3"), GenFileType::kQ4_K_M, "fallback.gguf")),
               [](const std::string& t, const std::vector<uint64_t>& d) {
                 if (d.size() == 1) return std::string("F32");
                 if (t == "token_embd.weight" || t == "blk.1.attn_v.weight" || t == "blk.1.ffn_down.weight")
                   return std::string("Q8_0");
                 return std::string("Q5_0");
               });
}

// With the shared data: the generated files' per-tensor types equal those of
// the files llama-quantize made from models of the same shapes.
TEST(GenModelLayout, TypesEqualTheSharedQuantizedFiles) {
  KZ_REQUIRE_SHARED_DATA();
  struct Case { std::string preset, shared; GenFileType type; };
  const std::vector<Case> cases = {
      {"tiny-qwen3", "qwen3-tiny-q4_0.gguf", GenFileType::kQ4_0},
      {"tiny-qwen35", "qwen35-tiny-q4_0.gguf", GenFileType::kQ4_0},
      {"tiny-qwen35", "qwen35-chat-q8_0.gguf", GenFileType::kQ8_0},
      {"tiny-qwen3-k", "qwen3-kq-q4_k_m.gguf", GenFileType::kQ4_K_M},
      {"tiny-qwen3-k", "qwen3-kq-q5_k_m.gguf", GenFileType::kQ5_K_M},
      {"tiny-qwen3-k", "qwen3-kq-q6_k.gguf", GenFileType::kQ6_K},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.shared);
    const gguf::File ref = open(shared_model(k.shared));
    const gguf::File ours = open(write(preset(k.preset), k.type, "vs_" + k.shared));
    EXPECT_EQ(types_of(ours), types_of(ref));
    EXPECT_EQ(ours.get_u32("general.file_type").value_or(999), ref.get_u32("general.file_type").value_or(998));
  }
}

// ---- Metadata -------------------------------------------------------------------------

TEST(GenModelLayout, MetadataKeyTypesMatchTheSharedFiles) {
  KZ_REQUIRE_SHARED_DATA();
  {
    const gguf::File ours = open(write(preset("tiny-qwen3"), GenFileType::kF32, "meta_q3.gguf"));
    const gguf::File ref = open(shared_model("qwen3-tiny-f32.gguf"));
    expect_same_key_types(ours, ref, "qwen3.");
    expect_same_key_types(ours, ref, "tokenizer.");
    expect_same_key_types(ours, ref, "general.", {}, {});
  }
  {
    const gguf::File ours = open(write(preset("tiny-qwen35"), GenFileType::kF32, "meta_q35.gguf"));
    const gguf::File ref = open(shared_model("qwen35-tiny-f32.gguf"));
    expect_same_key_types(ours, ref, "qwen35.");
    expect_same_key_types(ours, ref, "tokenizer.");
    // Same shapes: every hyper-parameter has the shared file's value too.
    for (const auto& kv : ref.metadata()) {
      if (kv.key.starts_with("qwen35.") && ours.find(kv.key)) {
        EXPECT_EQ(ours.find(kv.key)->summary(64), kv.value.summary(64)) << kv.key;
      }
    }
  }
  {
    GenModelConfig c = preset("tiny-qwen35");
    c.nextn_predict_layers = 1;
    const gguf::File ours = open(write(c, GenFileType::kF32, "meta_mtp.gguf"));
    const gguf::File ref = open(shared_model("qwen35-mtp-f32.gguf"));
    expect_same_key_types(ours, ref, "qwen35.");
    expect_same_key_types(ours, ref, "tokenizer.");
    for (const auto& kv : ref.metadata()) {
      if (kv.key.starts_with("qwen35.")) {
        EXPECT_EQ(ours.find(kv.key) ? ours.find(kv.key)->summary(64) : "", kv.value.summary(64)) << kv.key;
      }
    }
  }
  {
    const gguf::File ours = open(write(preset("tiny-qwen3-k"), GenFileType::kQ4_K_M, "meta_kq.gguf"));
    const gguf::File ref = open(shared_model("qwen3-kq-q4_k_m.gguf"));
    expect_same_key_types(ours, ref, "qwen3.");
    expect_same_key_types(ours, ref, "tokenizer.");
    expect_same_key_types(ours, ref, "general.");
  }
  {
    // stories260K: we write rope.freq_base (llama.cpp's default made explicit)
    // and leave out its "none" separator / padding ids (0xFFFFFFFF), which
    // llama.cpp reports as bad special tokens.
    const gguf::File ours = open(write(preset("tiny-llama"), GenFileType::kF32, "meta_llama.gguf"));
    const gguf::File ref = open(shared_model("stories260K.gguf"));
    expect_same_key_types(ours, ref, "llama.", {}, {"llama.rope.freq_base"});
    expect_same_key_types(ours, ref, "tokenizer.",
                          {"tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id"});
  }
}

TEST(GenModelLayout, MtpFileEqualsTheSharedMtpLayoutTensorForTensor) {
  KZ_REQUIRE_SHARED_DATA();
  GenModelConfig c = preset("tiny-qwen35");
  c.nextn_predict_layers = 1;
  c.tokenizer_from = shared_model("qwen35-mtp-f32.gguf");
  const gguf::File ours = open(write(c, GenFileType::kF32, "mtp_like.gguf"));
  const gguf::File ref = open(shared_model("qwen35-mtp-f32.gguf"));
  ASSERT_EQ(ours.tensors().size(), ref.tensors().size());
  for (size_t i = 0; i < ref.tensors().size(); ++i) {  // same order, names, shapes, types, offsets
    const auto& a = ours.tensors()[i];
    const auto& b = ref.tensors()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.dims, b.dims) << b.name;
    EXPECT_EQ(a.type, b.type) << b.name;
    EXPECT_EQ(a.offset, b.offset) << b.name;
  }
}

TEST(GenModelLayout, DescribeGivesTheExactFileSize) {
  for (const std::string name : {"tiny-llama", "tiny-qwen3-k", "tiny-qwen35"}) {
    for (GenFileType type : {GenFileType::kF32, GenFileType::kBF16, GenFileType::kQ5_1, GenFileType::kQ4_K_M}) {
      GenModelConfig c = preset(name);
      c.file_type = type;
      c.nextn_predict_layers = name == "tiny-qwen35" ? 1 : 0;
      auto d = describe_test_model(c);
      ASSERT_TRUE(d.ok()) << d.status().to_string();
      const std::string path = write(c, type, "describe.gguf");
      EXPECT_EQ(d->file_bytes, std::filesystem::file_size(path)) << name << " " << gen_file_type_info(type).name;
      EXPECT_EQ(d->n_tensors, open(path).tensors().size());
    }
  }
  // The big presets are cheap to describe; sizes are plausible for their bits per weight.
  GenModelConfig big = preset("qwen3-0.6b");
  big.file_type = GenFileType::kQ4_0;
  auto d = describe_test_model(big);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->n_parameters, 596049920u);
  EXPECT_GT(d->file_bytes, d->n_parameters / 2);   // > 4 bits per weight
  EXPECT_LT(d->file_bytes, d->n_parameters);       // < 8 bits per weight
}

TEST(GenModelLayout, RejectsImpossibleShapes) {
  GenModelConfig c = preset("tiny-qwen3");
  c.n_head = 5;  // not a multiple of n_head_kv = 2
  auto r = write_test_model(c, work_dir() + "/gen_bad.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("n_head"), std::string::npos) << r.status().to_string();

  GenModelConfig q = preset("tiny-qwen35");
  q.ssm_time_step_rank = 3;  // not a multiple of group_count = 2
  EXPECT_FALSE(write_test_model(q, work_dir() + "/gen_bad.gguf").ok());
  GenModelConfig m = preset("tiny-qwen3");
  m.nextn_predict_layers = 1;  // MTP is qwen35 only
  EXPECT_FALSE(write_test_model(m, work_dir() + "/gen_bad.gguf").ok());
  GenModelConfig v = preset("tiny-qwen3");
  v.n_vocab = 100;  // smaller than 256 bytes + special tokens
  EXPECT_FALSE(write_test_model(v, work_dir() + "/gen_bad.gguf").ok());
}

}  // namespace
}  // namespace kazeia::gen
