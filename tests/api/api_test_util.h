// Helpers shared by the public-API tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "common/test_data.h"
#include "kazeia/engine.h"
#include "kazeia/gen_model.h"

namespace kazeia::testing {

// A generated model file in the scratch folder (one per process); "" if
// generating it failed.
inline std::string generate_scratch_model(const std::string& preset, const std::string& type) {
  const std::string p = scratch_dir() + "/api_" + preset + "_" + type + "_" + std::to_string(::getpid()) + ".gguf";
  GenModelOptions o;
  o.preset = preset;
  o.type = type;
  return generate_test_model(o, p).ok() ? p : std::string();
}

// A tiny-qwen3 model (synthetic 4,096-token vocabulary and chat template),
// generated once per process.
inline const std::string& tiny_qwen3_model() {
  static const std::string path = generate_scratch_model("tiny-qwen3", "q8_0");
  return path;
}

// A tiny-qwen35 model (F32), the hybrid recurrent architecture.
inline const std::string& tiny_qwen35_model() {
  static const std::string path = generate_scratch_model("tiny-qwen35", "f32");
  return path;
}

// Greedy decoding of up to n tokens, past EOS (random weights end early).
inline GenerateOptions greedy_options(int32_t n) {
  GenerateOptions o;
  o.max_tokens = n;
  o.sampling.temperature = 0.0f;
  o.ignore_eos = true;
  return o;
}

inline std::unique_ptr<Engine> load_engine(const std::string& path, int64_t n_ctx = 2048, int64_t n_ubatch = 0) {
  EngineOptions eo;
  eo.n_threads = 1;
  eo.n_ctx = n_ctx;
  if (n_ubatch > 0) eo.n_ubatch = n_ubatch;
  auto engine = Engine::load(path, eo);
  EXPECT_TRUE(engine.ok()) << engine.status().to_string();
  return engine.ok() ? std::move(engine.value()) : nullptr;
}

}  // namespace kazeia::testing
