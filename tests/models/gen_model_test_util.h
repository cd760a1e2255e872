// Helpers shared by the model-generator tests (test_gen_model_*.cpp).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "common/test_data.h"
#include "format/gguf.h"
#include "models/test_model_generator.h"

namespace kazeia::gen::test_util {

// This process's own folder under scratch_dir(): test runs of several build
// trees may share the scratch folder at the same time. Removed at exit.
inline const std::string& work_dir() {
  static const struct Dir {
    std::string path = ::kazeia::testing::scratch_dir() + "/gen_model_" + std::to_string(::getpid());
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

inline GenModelConfig preset(const std::string& name) {
  auto c = gen_preset_config(name);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(GenModelConfig{});
}

inline gguf::File open(const std::string& path) {
  auto f = gguf::File::open(path);
  EXPECT_TRUE(f.ok()) << path << ": " << f.status().to_string();
  return f.ok() ? std::move(f.value()) : gguf::File{};
}

}  // namespace kazeia::gen::test_util
