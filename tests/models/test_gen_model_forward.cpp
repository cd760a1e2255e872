// Generated models load in our engine and their forward passes stay
// numerically tame: finite logits with a sane spread at every position, for
// float and quantized files of each architecture the engine supports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/test_data.h"
#include "format/gguf.h"
#include "models/gen_model_test_util.h"
#include "models/model.h"
#include "models/shared_test_model.h"
#include "models/test_model_generator.h"

namespace kazeia::gen {
namespace {


TEST(GenModelForward, LogitsAreFiniteWithASaneSpread) {
  const std::string& dir = test_util::work_dir();
  const std::vector<std::string> archs = supported_architectures();
  struct Case { std::string preset; GenFileType type; uint32_t mtp; };
  const std::vector<Case> cases = {
      {"tiny-llama", GenFileType::kF32, 0},     {"tiny-llama-k", GenFileType::kQ4_K_M, 0},
      {"tiny-qwen3", GenFileType::kF32, 0},     {"tiny-qwen3", GenFileType::kQ4_0, 0},
      {"tiny-qwen3-k", GenFileType::kQ4_K_M, 0}, {"tiny-qwen35", GenFileType::kF32, 1},
      {"tiny-qwen35", GenFileType::kQ8_0, 0},   {"tiny-qwen35-k", GenFileType::kQ5_K_M, 1},
  };
  int ran = 0;
  for (const Case& k : cases) {
    auto config = gen_preset_config(k.preset);
    ASSERT_TRUE(config.has_value());
    const std::string arch(gen_arch_name(config->arch));
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) {
      std::fprintf(stderr, "*** SKIPPING %s: the engine does not support arch %s yet ***\n", k.preset.c_str(), arch.c_str());
      continue;
    }
    SCOPED_TRACE(k.preset + " " + std::string(gen_file_type_info(k.type).name));
    config->file_type = k.type;
    config->nextn_predict_layers = k.mtp;
    config->seed = 5;
    const std::string path = dir + "/gen_forward_model.gguf";
    auto written = write_test_model(*config, path);
    ASSERT_TRUE(written.ok()) << written.status().to_string();
    auto file = gguf::File::open(path);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto model = load_model(*file);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    const int64_t nv = (*model)->config().n_vocab;
    ASSERT_EQ(nv, config->n_vocab);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 24; ++i) tokens.push_back(static_cast<int32_t>((i * 97 + 5) % 256));
    auto state = (*model)->new_state({.n_ctx = 64});
    ASSERT_TRUE(state.ok()) << state.status().to_string();
    std::vector<float> logits(tokens.size() * static_cast<size_t>(nv));
    ForwardRequest r;
    r.tokens = tokens;
    r.rows = LogitsRows::kAll;
    r.logits = logits.data();
    Status s = (*model)->forward(**state, r);
    ASSERT_TRUE(s.ok()) << s.to_string();
    double sd_min = 1e9, sd_max = 0;
    for (size_t pos = 0; pos < tokens.size(); ++pos) {
      const float* row = logits.data() + pos * static_cast<size_t>(nv);
      double sum = 0, sum2 = 0, peak = 0;
      for (int64_t v = 0; v < nv; ++v) {
        ASSERT_TRUE(std::isfinite(row[v])) << "position " << pos << " token " << v;
        sum += row[v];
        sum2 += double(row[v]) * row[v];
        peak = std::max(peak, std::abs(double(row[v])));
      }
      const double mean = sum / nv, sd = std::sqrt(std::max(0.0, sum2 / nv - mean * mean));
      EXPECT_GT(sd, 0.05) << "position " << pos << ": logits nearly constant";
      EXPECT_LT(sd, 20.0) << "position " << pos << ": logits blow up";
      EXPECT_LT(peak, 200.0) << "position " << pos;
      sd_min = std::min(sd_min, sd);
      sd_max = std::max(sd_max, sd);
    }
    std::printf("%-14s %-7s logits sd %.3f .. %.3f\n", k.preset.c_str(), std::string(gen_file_type_info(k.type).name).c_str(),
                sd_min, sd_max);
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no architecture of the generated models is supported yet";
}

// The KV cache in spans of one and three tiles (model_state.h) against the
// default, one span for these small models: prefill pieces and decode cross
// span boundaries, the second case into a last span shorter than the others
// (the context ends a tile into it), and no logit may change by a bit. Runs
// without the shared data.
TEST(GenModelForward, KvSpansLeaveTheLogitsAlone) {
  const std::string& dir = test_util::work_dir();
  for (const char* preset : {"tiny-qwen3", "tiny-qwen35"}) {
    SCOPED_TRACE(preset);
    auto config = gen_preset_config(preset);
    ASSERT_TRUE(config.has_value());
    config->file_type = GenFileType::kQ8_0;
    config->seed = 11;
    const std::string path = dir + "/gen_kv_span_model.gguf";
    auto written = write_test_model(*config, path);
    ASSERT_TRUE(written.ok()) << written.status().to_string();
    const testing::LoadedModel loaded = testing::load_model_file(path);
    ASSERT_NE(loaded.model, nullptr);
    const Model& model = *loaded.model;
    const size_t nv = static_cast<size_t>(model.config().n_vocab);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 3 * kKvTile + 5; ++i) tokens.push_back(static_cast<int32_t>((i * 131 + 7) % 256));
    const int64_t n_ctx = static_cast<int64_t>(tokens.size());
    auto run = [&](int64_t span, KvType kv_type) {
      auto state = model.new_state({.n_ctx = n_ctx, .kv_type = kv_type, .kv_span = span});
      EXPECT_TRUE(state.ok()) << state.status().to_string();
      std::vector<float> logits(tokens.size() * nv);
      // Pieces of 37 tokens, then one at a time: prefill and decode.
      for (size_t start = 0; start < tokens.size();) {
        const size_t n = start < 2 * kKvTile ? std::min<size_t>(37, tokens.size() - start) : 1;
        ForwardRequest r;
        r.tokens = std::span<const int32_t>(tokens.data() + start, n);
        r.rows = LogitsRows::kAll;
        r.logits = logits.data() + start * nv;
        Status s = model.forward(**state, r);
        EXPECT_TRUE(s.ok()) << s.to_string();
        start += n;
      }
      return logits;
    };
    for (KvType kv_type : {KvType::kF32, KvType::kF16}) {
      const std::vector<float> one = run(0, kv_type);
      for (int64_t span : {kKvTile, 3 * kKvTile}) {
        const std::vector<float> spans = run(span, kv_type);
        EXPECT_EQ(0, std::memcmp(one.data(), spans.data(), one.size() * sizeof(float)))
            << (kv_type == KvType::kF16 ? "f16" : "f32") << " cache, spans of " << span;
      }
    }
  }
}

}  // namespace
}  // namespace kazeia::gen
