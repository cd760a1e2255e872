// Dequantization of real K-quant files, bit-identical with llama.cpp's own
// Python reader (gguf-py's gguf.quants.dequantize, installed in .venv by
// scripts/setup.sh). gguf_py_dequant.py dumps its float32 output; every
// quantized tensor is compared element by element, bit for bit. (The Q8_0 /
// Q4_0 files are left out: gguf-py needs ~30 s to parse their 151936-token
// vocabulary; those dequantizers are checked against ggml in golden_test.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "common/test_data.h"
#include "format/gguf.h"
#include "tensor/quant.h"

namespace kazeia {
namespace {

std::string venv_python() { return std::string(KAZEIA_SOURCE_DIR "/.venv/bin/python"); }

void check_file(const std::string& model_name, std::map<std::string, int>* per_type) {
  const std::string model = testing::shared_model(model_name);
  const std::string out = testing::scratch_dir() + "/gguf_py_" + model_name + "." +
                          std::to_string(::getpid()) + ".bin";
  const std::string cmd = "'" + venv_python() + "' '" + std::string(KAZEIA_SOURCE_DIR) +
                          "/tests/tensor/gguf_py_dequant.py' '" + model + "' '" + out + "'";
  const int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
    std::fprintf(stderr,
                 "\n*** SKIPPING: gguf-py is not importable from %s (run scripts/setup.sh) ***\n",
                 venv_python().c_str());
    GTEST_SKIP() << "gguf-py not importable";
  }
  ASSERT_EQ(rc, 0) << cmd;

  std::ifstream f(out, std::ios::binary);
  std::vector<uint8_t> dump((std::istreambuf_iterator<char>(f)), {});
  f.close();
  std::filesystem::remove(out);

  auto file = gguf::File::open(model);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  size_t pos = 0;
  auto take = [&](void* dst, size_t n) {
    if (pos + n > dump.size()) return false;
    std::memcpy(dst, dump.data() + pos, n);
    pos += n;
    return true;
  };
  int tensors = 0;
  while (pos < dump.size()) {
    uint32_t name_len = 0, type = 0;
    uint64_t n = 0;
    ASSERT_TRUE(take(&name_len, 4));
    std::string name(name_len, '\0');
    ASSERT_TRUE(take(name.data(), name_len));
    ASSERT_TRUE(take(&type, 4));
    ASSERT_TRUE(take(&n, 8));
    ASSERT_LE(n * sizeof(float), dump.size() - pos);
    const uint8_t* ref_bytes = dump.data() + pos;
    pos += n * sizeof(float);

    SCOPED_TRACE(model_name + " tensor '" + name + "'");
    const gguf::TensorInfo* t = file->find_tensor(name);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(static_cast<uint32_t>(t->type), type);
    ASSERT_EQ(t->n_elements, n);
    ASSERT_TRUE(can_dequantize(t->type));
    std::vector<float> ours(n);
    ASSERT_TRUE(dequantize_row(t->type, t->data, ours.data(), static_cast<int64_t>(n)).ok());
    if (std::memcmp(ours.data(), ref_bytes, n * sizeof(float)) != 0) {
      for (uint64_t i = 0; i < n; ++i) {
        float r;
        std::memcpy(&r, ref_bytes + i * sizeof(float), sizeof(float));
        ASSERT_EQ(std::memcmp(&ours[i], &r, sizeof(float)), 0)
            << "element " << i << ": ours " << ours[i] << ", gguf-py " << r;
      }
    }
    ++tensors;
    ++(*per_type)[std::string(tensor_type_name(t->type))];
  }
  EXPECT_GT(tensors, 0);
  std::printf("%s: %d quantized tensors bit-identical with gguf-py\n", model_name.c_str(), tensors);
}

class GgufPyDequant : public ::testing::Test {
 protected:
  void SetUp() override {
    KZ_REQUIRE_SHARED_DATA();
    if (!std::filesystem::exists(venv_python())) {
      std::fprintf(stderr, "\n*** SKIPPING: %s not found (run scripts/setup.sh) ***\n",
                   venv_python().c_str());
      GTEST_SKIP() << venv_python() << " not found";
    }
  }
};

TEST_F(GgufPyDequant, Qwen3KqQ4_K_M) {
  std::map<std::string, int> types;
  check_file("qwen3-kq-q4_k_m.gguf", &types);
  if (IsSkipped()) return;
  EXPECT_EQ(types["Q4_K"], 12);
  EXPECT_EQ(types["Q6_K"], 3);
}

TEST_F(GgufPyDequant, Qwen3KqQ5_K_M) {
  std::map<std::string, int> types;
  check_file("qwen3-kq-q5_k_m.gguf", &types);
  if (IsSkipped()) return;
  EXPECT_EQ(types["Q5_K"], 12);
  EXPECT_EQ(types["Q6_K"], 3);
}

TEST_F(GgufPyDequant, Qwen3KqQ6_K) {
  std::map<std::string, int> types;
  check_file("qwen3-kq-q6_k.gguf", &types);
  if (IsSkipped()) return;
  EXPECT_EQ(types["Q6_K"], 15);
}

}  // namespace
}  // namespace kazeia
