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

// A tiny-qwen3 model (synthetic 4,096-token vocabulary and chat template),
// generated once per process into the scratch folder; "" if that failed.
inline const std::string& tiny_qwen3_model() {
  static const std::string path = [] {
    const std::string p = scratch_dir() + "/api_tiny_qwen3_" + std::to_string(::getpid()) + ".gguf";
    GenModelOptions o;
    o.preset = "tiny-qwen3";
    o.type = "q8_0";
    return generate_test_model(o, p).ok() ? p : std::string();
  }();
  return path;
}

// A tiny-qwen35 model (F32), the hybrid recurrent architecture; "" on failure.
inline const std::string& tiny_qwen35_model() {
  static const std::string path = [] {
    const std::string p = scratch_dir() + "/api_tiny_qwen35_" + std::to_string(::getpid()) + ".gguf";
    GenModelOptions o;
    o.preset = "tiny-qwen35";
    o.type = "f32";
    return generate_test_model(o, p).ok() ? p : std::string();
  }();
  return path;
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
