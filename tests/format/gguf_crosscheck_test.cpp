// An independent check of the writer: llama.cpp's own Python reader (the
// `gguf` package in the project's .venv, run by check_gguf.py) must read back
// exactly what we wrote.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "format/gguf.h"

namespace kazeia::gguf {
namespace {

using nlohmann::json;

const std::string kPython = KAZEIA_SOURCE_DIR "/.venv/bin/python";
const std::string kScript = KAZEIA_SOURCE_DIR "/tests/format/check_gguf.py";

// Runs a shell command, returning its stdout and exit status.
std::pair<std::string, int> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {"", -1};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  return {out, ::pclose(p)};
}

bool python_gguf_available() {
  if (!std::filesystem::exists(kPython)) return false;
  return run("'" + kPython + "' -c 'import gguf' 2>/dev/null").second == 0;
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h;
}

// What the Python reader printed for one value against what we wrote.
void expect_value(const json& got, const Value& want, const std::string& where) {
  switch (want.type()) {
    case ValueType::kArray: {
      const Array& a = *want.as_array();
      ASSERT_TRUE(got.is_object()) << where << ": " << got.dump();
      EXPECT_EQ(got["element_type"], upper(value_type_name(a.element_type))) << where;
      ASSERT_EQ(got["items"].size(), a.items.size()) << where;
      for (size_t i = 0; i < a.items.size(); ++i)
        expect_value(got["items"][i], a.items[i], where + "[" + std::to_string(i) + "]");
      return;
    }
    case ValueType::kString: EXPECT_EQ(got.get<std::string>(), *want.as_string()) << where; return;
    case ValueType::kBool: EXPECT_EQ(got.get<bool>(), std::get<bool>(want.v)) << where; return;
    case ValueType::kFloat32:
    case ValueType::kFloat64: EXPECT_EQ(got.get<double>(), *want.as_float()) << where; return;  // exact
    default: break;
  }
  if (auto u = want.as_uint()) {
    ASSERT_TRUE(got.is_number_unsigned() || got.is_number_integer()) << where << ": " << got.dump();
    EXPECT_EQ(got.get<uint64_t>(), *u) << where;
  } else {
    ASSERT_TRUE(got.is_number_integer()) << where << ": " << got.dump();
    EXPECT_EQ(got.get<int64_t>(), *want.as_int()) << where;
  }
}

struct CrossTensor {
  std::string name;
  TensorType type;
  std::vector<uint64_t> dims;
  size_t bytes;
};

const std::vector<CrossTensor>& crosscheck_tensors() {
  static const std::vector<CrossTensor> t = {
      {"a.f32", TensorType::F32, {8, 3}, 96},      {"b.f16", TensorType::F16, {32, 2}, 128},
      {"c.q4_0", TensorType::Q4_0, {64, 2}, 72},   {"d.q8_0", TensorType::Q8_0, {32, 3}, 102},
      {"e.q4_k", TensorType::Q4_K, {256, 2}, 288}, {"f.q6_k", TensorType::Q6_K, {256, 1, 2}, 420},
  };
  return t;
}

std::vector<uint8_t> tensor_data(size_t index) {
  std::vector<uint8_t> data(crosscheck_tensors()[index].bytes);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 + index * 7 + 1);
  return data;
}

Writer crosscheck_writer(uint32_t alignment) {
  Writer w;
  w.set("general.architecture", Value("crosscheck"));
  if (alignment != kDefaultAlignment) w.set("general.alignment", Value(alignment));
  w.set("c.u8", Value(uint8_t{250}));
  w.set("c.i8", Value(int8_t{-100}));
  w.set("c.u16", Value(uint16_t{60000}));
  w.set("c.i16", Value(int16_t{-30000}));
  w.set("c.u32", Value(uint32_t{4000000000u}));
  w.set("c.i32", Value(int32_t{-2000000000}));
  w.set("c.f32", Value(0.1f));
  w.set("c.bool", Value(true));
  w.set("c.u64", Value(std::numeric_limits<uint64_t>::max()));
  w.set("c.i64", Value(std::numeric_limits<int64_t>::min()));
  w.set("c.f64", Value(-2.5e-300));
  w.set("c.str", Value("h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C"));
  w.set("c.str_empty", Value(""));
  w.set("c.tokens", Value(Array{ValueType::kString, {Value("a"), Value(""), Value("<|im_end|>")}}));
  w.set("c.flags", Value(Array{ValueType::kBool, {Value(true), Value(false)}}));
  w.set("c.sections", Value(Array{ValueType::kInt32, {Value(int32_t{2}), Value(int32_t{1}), Value(int32_t{-1})}}));
  w.set("c.empty", Value(Array{ValueType::kFloat32, {}}));
  w.set("c.nested", Value(Array{ValueType::kArray,
                                {Value(Array{ValueType::kUint16, {Value(uint16_t{1}), Value(uint16_t{2})}}),
                                 Value(Array{ValueType::kUint16, {Value(uint16_t{3})}})}}));
  for (size_t i = 0; i < crosscheck_tensors().size(); ++i) {
    const CrossTensor& t = crosscheck_tensors()[i];
    EXPECT_TRUE(w.add_tensor(t.name, t.type, t.dims, tensor_data(i)).ok());
  }
  return w;
}

void crosscheck(uint32_t alignment) {
  if (!python_gguf_available()) {
    std::fprintf(stderr, "\n*** SKIPPING: %s with the gguf package not found (run scripts/setup.sh) ***\n",
                 kPython.c_str());
    GTEST_SKIP() << kPython << " with the gguf package not found";
  }
  Writer w = crosscheck_writer(alignment);
  std::string path = ::kazeia::testing::scratch_dir() + "/crosscheck_" + std::to_string(alignment) + "_" +
                     std::to_string(::getpid()) + ".gguf";
  ASSERT_TRUE(w.write(path).ok());
  auto [out, rc] = run("'" + kPython + "' '" + kScript + "' '" + path + "'");
  ASSERT_EQ(rc, 0) << "check_gguf.py failed: " << out;
  json got = json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(got.is_discarded()) << out;

  auto mine = File::open(path);
  ASSERT_TRUE(mine.ok()) << mine.status().to_string();
  EXPECT_EQ(got["version"], 3);
  EXPECT_EQ(got["alignment"], alignment);
  EXPECT_EQ(got["data_offset"], mine->data_offset());

  ASSERT_EQ(got["kv"].size(), w.metadata().size());
  for (size_t i = 0; i < w.metadata().size(); ++i) {
    const KeyValue& kv = w.metadata()[i];
    EXPECT_EQ(got["kv"][i]["key"], kv.key);
    EXPECT_EQ(got["kv"][i]["type"], upper(value_type_name(kv.value.type()))) << kv.key;
    expect_value(got["kv"][i]["value"], kv.value, kv.key);
  }
  // Against what we wrote, not what our reader reads.
  ASSERT_EQ(got["tensors"].size(), crosscheck_tensors().size());
  uint64_t offset = 0;
  for (size_t i = 0; i < crosscheck_tensors().size(); ++i) {
    const CrossTensor& t = crosscheck_tensors()[i];
    const json& g = got["tensors"][i];
    auto data = tensor_data(i);
    EXPECT_EQ(g["name"], t.name);
    EXPECT_EQ(g["type"], std::string(tensor_type_name(t.type))) << t.name;
    EXPECT_EQ(g["shape"].get<std::vector<uint64_t>>(), t.dims) << t.name;
    EXPECT_EQ(g["n_bytes"], t.bytes) << t.name;
    EXPECT_EQ(g["offset"], offset) << t.name;
    EXPECT_EQ(g["fnv1a64"], std::to_string(fnv1a64(data.data(), data.size()))) << t.name;
    offset = (offset + t.bytes + alignment - 1) / alignment * alignment;
  }
  std::filesystem::remove(path);
}

TEST(GgufCrossCheck, PythonGgufReaderReadsOurFileDefaultAlignment) { crosscheck(32); }
TEST(GgufCrossCheck, PythonGgufReaderReadsOurFileAlignment64) { crosscheck(64); }

}  // namespace
}  // namespace kazeia::gguf
