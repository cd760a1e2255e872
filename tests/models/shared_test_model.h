// A model file of ../shared/models loaded for a test: the mapped file and
// the model that views it (the model must not outlive the file).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "common/test_data.h"
#include "format/gguf.h"
#include "models/model.h"

namespace kazeia::testing {

struct LoadedModel {
  std::optional<gguf::File> file;
  std::unique_ptr<Model> model;  // null when loading failed (a test failure)
};

// Any model file (a generated one, say).
inline LoadedModel load_model_file(const std::string& path) {
  LoadedModel l;
  auto file = gguf::File::open(path);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok()) return l;
  l.file.emplace(std::move(*file));
  auto model = load_model(*l.file);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (model.ok()) l.model = std::move(*model);
  return l;
}

inline LoadedModel load_shared_model(const std::string& file_name) { return load_model_file(shared_model(file_name)); }

}  // namespace kazeia::testing
