// Writer -> reader round trips: every value type, nested and empty arrays,
// several tensor types with exact bytes, default and custom alignment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/test_data.h"
#include "format/gguf.h"

namespace kazeia::gguf {
namespace {

using ::kazeia::testing::scratch_dir;

// Deterministic, position-dependent bytes so a shifted or swapped tensor shows.
std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = 0x9E3779B9u * (seed + 1u);
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

Array array_of(ValueType t, std::vector<Value> items) { return Array{t, std::move(items)}; }

// The metadata the round trip checks: every type, edge values, nesting.
std::vector<KeyValue> sample_metadata() {
  Array nested = array_of(ValueType::kArray, {
      Value(array_of(ValueType::kInt32, {Value(int32_t{1}), Value(int32_t{-2}), Value(int32_t{3})})),
      Value(array_of(ValueType::kInt32, {})),
      Value(array_of(ValueType::kString, {Value("x"), Value("")})),
  });
  Array deep = array_of(ValueType::kArray, {Value(array_of(ValueType::kArray, {Value(nested)}))});
  return {
      {"general.architecture", Value("test")},
      {"t.u8", Value(uint8_t{255})},
      {"t.i8", Value(int8_t{-128})},
      {"t.u16", Value(uint16_t{65535})},
      {"t.i16", Value(int16_t{-32768})},
      {"t.u32", Value(std::numeric_limits<uint32_t>::max())},
      {"t.i32", Value(std::numeric_limits<int32_t>::min())},
      {"t.f32", Value(1.5f)},
      {"t.f32_neg_zero", Value(-0.0f)},
      {"t.bool_true", Value(true)},
      {"t.bool_false", Value(false)},
      {"t.str_empty", Value("")},
      {"t.str_unicode", Value("h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x8E\x89")},  // héllo 世界 🎉
      {"t.str_nul", Value(std::string("a\0b", 3))},
      {"t.u64", Value(std::numeric_limits<uint64_t>::max())},
      {"t.i64_min", Value(std::numeric_limits<int64_t>::min())},
      {"t.i64_max", Value(std::numeric_limits<int64_t>::max())},
      {"t.f64", Value(3.141592653589793)},
      {"t.f64_tiny", Value(4.9e-324)},
      {"t.arr_empty_str", Value(array_of(ValueType::kString, {}))},
      {"t.arr_empty_i32", Value(array_of(ValueType::kInt32, {}))},
      {"t.arr_str", Value(array_of(ValueType::kString, {Value("a"), Value(""), Value("\xC3\xA9")}))},
      {"t.arr_bool", Value(array_of(ValueType::kBool, {Value(true), Value(false), Value(true)}))},
      {"t.arr_f64", Value(array_of(ValueType::kFloat64, {Value(-1.0), Value(1e300)}))},
      {"t.arr_u8", Value(array_of(ValueType::kUint8, {Value(uint8_t{0}), Value(uint8_t{255})}))},
      {"t.arr_i64", Value(array_of(ValueType::kInt64, {Value(std::numeric_limits<int64_t>::min())}))},
      {"t.arr_nested", Value(nested)},
      {"t.arr_deep", Value(deep)},
  };
}

// Exact equality, floats bit for bit (so -0.0 and 0.0 differ).
void expect_same_value(const Value& a, const Value& b, const std::string& where) {
  ASSERT_EQ(a.type(), b.type()) << where;
  if (const Array* x = a.as_array()) {
    const Array* y = b.as_array();
    ASSERT_EQ(x->element_type, y->element_type) << where;
    ASSERT_EQ(x->items.size(), y->items.size()) << where;
    for (size_t i = 0; i < x->items.size(); ++i)
      expect_same_value(x->items[i], y->items[i], where + "[" + std::to_string(i) + "]");
  } else if (auto f = std::get_if<float>(&a.v)) {
    float g = std::get<float>(b.v);
    EXPECT_EQ(std::memcmp(f, &g, sizeof(float)), 0) << where;
  } else if (auto d = std::get_if<double>(&a.v)) {
    double e = std::get<double>(b.v);
    EXPECT_EQ(std::memcmp(d, &e, sizeof(double)), 0) << where;
  } else if (const std::string* x = a.as_string()) {
    EXPECT_EQ(*x, *b.as_string()) << where;
  } else if (a.is_integer()) {
    EXPECT_EQ(a.as_int(), b.as_int()) << where;
    EXPECT_EQ(a.as_uint(), b.as_uint()) << where;
  } else {
    EXPECT_EQ(std::get<bool>(a.v), std::get<bool>(b.v)) << where;
  }
}

struct SampleTensor {
  std::string name;
  TensorType type;
  std::vector<uint64_t> dims;
  size_t n_bytes;
};

const std::vector<SampleTensor>& sample_tensors() {
  static const std::vector<SampleTensor> t = {
      {"f32", TensorType::F32, {8, 3}, 8 * 3 * 4},
      {"f16", TensorType::F16, {32, 2}, 32 * 2 * 2},
      {"q4_0", TensorType::Q4_0, {64, 2}, 4 * 18},
      {"q8_0", TensorType::Q8_0, {32, 3}, 3 * 34},
      {"q4_k", TensorType::Q4_K, {256, 2}, 2 * 144},
      {"q6_k", TensorType::Q6_K, {256, 1, 1, 2}, 2 * 210},
  };
  return t;
}

Writer sample_writer(uint32_t alignment) {
  Writer w;
  for (auto& kv : sample_metadata()) w.set(kv.key, kv.value);
  if (alignment != kDefaultAlignment) w.set("general.alignment", Value(alignment));
  uint8_t seed = 0;
  for (const auto& t : sample_tensors()) {
    Status s = w.add_tensor(t.name, t.type, t.dims, pattern(t.n_bytes, seed++));
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  return w;
}

// Checks a parsed sample file against what sample_writer() wrote.
void check_sample(const File& f, uint32_t alignment) {
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  auto expected_kv = sample_metadata();
  size_t extra = alignment != kDefaultAlignment ? 1 : 0;
  ASSERT_EQ(f.metadata().size(), expected_kv.size() + extra);
  for (size_t i = 0; i < expected_kv.size(); ++i) {
    EXPECT_EQ(f.metadata()[i].key, expected_kv[i].key);  // insertion order kept
    expect_same_value(f.metadata()[i].value, expected_kv[i].value, expected_kv[i].key);
  }
  ASSERT_EQ(f.tensors().size(), sample_tensors().size());
  uint64_t expected_offset = 0;
  uint8_t seed = 0;
  for (size_t i = 0; i < sample_tensors().size(); ++i) {
    const SampleTensor& want = sample_tensors()[i];
    const TensorInfo& got = f.tensors()[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.type, want.type) << want.name;
    EXPECT_EQ(got.dims, want.dims) << want.name;
    EXPECT_EQ(got.n_bytes, want.n_bytes) << want.name;
    EXPECT_EQ(got.offset, expected_offset) << want.name;
    EXPECT_EQ(got.offset % alignment, 0u) << want.name;
    EXPECT_EQ(got.data, f.bytes().data() + f.data_offset() + got.offset);
    auto data = pattern(want.n_bytes, seed++);
    ASSERT_EQ(std::memcmp(got.data, data.data(), data.size()), 0) << want.name;
    EXPECT_EQ(f.find_tensor(want.name), &got);
    expected_offset = (expected_offset + want.n_bytes + alignment - 1) / alignment * alignment;
  }
}

TEST(GgufRoundTrip, AllValueTypesAndTensorsDefaultAlignment) {
  auto bytes = sample_writer(32).to_bytes();
  auto f = File::parse(bytes, "sample");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  check_sample(*f, 32);
  // Hand-computed offsets for alignment 32: 96, 128, 72, 102, 288 bytes.
  std::vector<uint64_t> offsets;
  for (const auto& t : f->tensors()) offsets.push_back(t.offset);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 96, 224, 320, 448, 736}));
}

TEST(GgufRoundTrip, EraseDropsOneKeyAndKeepsTheOthersFindable) {
  auto bytes = sample_writer(32).to_bytes();
  auto f = File::parse(bytes, "sample");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const auto expected_kv = sample_metadata();
  ASSERT_GE(expected_kv.size(), 3u);
  const std::string victim = expected_kv[1].key;
  EXPECT_TRUE(f->erase(victim));
  EXPECT_FALSE(f->erase(victim));
  EXPECT_EQ(f->find(victim), nullptr);
  ASSERT_EQ(f->metadata().size(), expected_kv.size() - 1);
  for (const auto& kv : expected_kv) {
    if (kv.key == victim) continue;
    const Value* v = f->find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    expect_same_value(*v, kv.value, kv.key);
  }
  EXPECT_EQ(f->tensors().size(), sample_tensors().size());  // tensors untouched
}

TEST(GgufRoundTrip, CustomAlignment64) {
  auto bytes = sample_writer(64).to_bytes();
  auto f = File::parse(bytes, "sample64");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  check_sample(*f, 64);
  EXPECT_EQ(f->get_u32("general.alignment").value_or(0), 64u);
  std::vector<uint64_t> offsets;
  for (const auto& t : f->tensors()) offsets.push_back(t.offset);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 128, 256, 384, 512, 832}));
}

TEST(GgufRoundTrip, WriteToDiskMatchesToBytesAndOpens) {
  Writer w = sample_writer(64);
  std::string path = scratch_dir() + "/roundtrip_" + std::to_string(::getpid()) + ".gguf";
  ASSERT_TRUE(w.write(path).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(disk, w.to_bytes());
  auto f = File::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  check_sample(*f, 64);
  EXPECT_EQ(f->source_name(), path);
  // A copy shares the mapping: it stays valid when the original goes away.
  std::optional<File> copy;
  {
    File moved = std::move(f.value());
    copy = moved;
  }
  check_sample(*copy, 64);
  std::filesystem::remove(path);
}

TEST(GgufRoundTrip, Version2IsAccepted) {
  auto bytes = sample_writer(32).to_bytes();
  bytes[4] = 2;  // v2 and v3 share the layout
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->version(), 2u);
}

TEST(GgufRoundTrip, EmptyFileWithoutTensorsOrKeys) {
  Writer w;
  auto bytes = w.to_bytes();
  EXPECT_EQ(bytes.size(), 32u);  // 24-byte header padded to 32
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_TRUE(f->metadata().empty());
  EXPECT_TRUE(f->tensors().empty());
}

TEST(GgufWriter, SetReplacesInPlace) {
  Writer w;
  w.set("a", Value(uint32_t{1}));
  w.set("b", Value("two"));
  w.set("a", Value("one"));
  ASSERT_EQ(w.metadata().size(), 2u);
  EXPECT_EQ(w.metadata()[0].key, "a");
  EXPECT_EQ(*w.metadata()[0].value.as_string(), "one");
  auto bytes = w.to_bytes();
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->metadata()[0].key, "a");
  EXPECT_EQ(f->get_string("a").value_or(""), "one");
  EXPECT_EQ(f->metadata()[1].key, "b");
}

TEST(GgufWriter, AddTensorRejectsBadInput) {
  Writer w;
  Status s = w.add_tensor("w", TensorType::Q4_0, {64, 2}, std::vector<uint8_t>(70));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("70 bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("expected 72"), std::string::npos) << s.message();

  s = w.add_tensor("odd", TensorType::Q8_0, {48}, std::vector<uint8_t>(51));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("ne0 = 48"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("block size 32"), std::string::npos) << s.message();

  s = w.add_tensor("five", TensorType::F32, {1, 1, 1, 1, 1}, std::vector<uint8_t>(4));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  s = w.add_tensor("none", TensorType::F32, {}, std::vector<uint8_t>(4));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  s = w.add_tensor("big", TensorType::F32, {1ull << 40, 1ull << 40}, {});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);

  s = w.add_tensor(std::string(64, 'n'), TensorType::F32, {2}, std::vector<uint8_t>(8));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most 63"), std::string::npos) << s.message();
  EXPECT_TRUE(w.add_tensor(std::string(63, 'n'), TensorType::F32, {2}, std::vector<uint8_t>(8)).ok());

  ASSERT_TRUE(w.add_tensor("ok", TensorType::F32, {2}, std::vector<uint8_t>(8)).ok());
  s = w.add_tensor("ok", TensorType::F32, {2}, std::vector<uint8_t>(8));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("duplicate tensor name 'ok'"), std::string::npos) << s.message();
  EXPECT_EQ(w.tensor_count(), 2u);
}

TEST(GgufWriter, ValidateRefusesWhatTheReaderWould) {
  std::string path = scratch_dir() + "/invalid_" + std::to_string(::getpid()) + ".gguf";
  Writer w;
  w.set("general.alignment", Value(uint32_t{3}));
  Status s = w.write(path);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("general.alignment"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(path));

  w.set("general.alignment", Value(int32_t{32}));  // right value, wrong type
  EXPECT_EQ(w.validate().code(), ErrorCode::kInvalidArgument);

  Writer mixed;
  mixed.set("k", Value(Array{ValueType::kInt32, {Value(int32_t{1}), Value("two")}}));
  s = mixed.validate();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'k'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("item 1"), std::string::npos) << s.message();
}

TEST(GgufWriter, WriteReportsIoErrors) {
  Writer w;
  Status s = w.write("/nonexistent-dir-kazeia/x.gguf");
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find("/nonexistent-dir-kazeia/x.gguf"), std::string::npos) << s.message();
}

TEST(GgufFile, OpenMissingFileIsIoError) {
  auto f = File::open("/nonexistent-dir-kazeia/missing.gguf");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace kazeia::gguf
