// Value helpers and the typed getters of gguf::File.
#include <gtest/gtest.h>

#include <limits>

#include "format/gguf.h"

namespace kazeia::gguf {
namespace {

TEST(GgufValue, TypeNames) {
  EXPECT_EQ(value_type_name(ValueType::kUint8), "uint8");
  EXPECT_EQ(value_type_name(ValueType::kFloat32), "float32");
  EXPECT_EQ(value_type_name(ValueType::kString), "string");
  EXPECT_EQ(value_type_name(ValueType::kArray), "array");
  EXPECT_EQ(value_type_name(ValueType::kFloat64), "float64");
  EXPECT_EQ(value_type_name(static_cast<ValueType>(99)), "unknown");
}

TEST(GgufValue, TypeOfEachAlternative) {
  EXPECT_EQ(Value(uint8_t{1}).type(), ValueType::kUint8);
  EXPECT_EQ(Value(int8_t{1}).type(), ValueType::kInt8);
  EXPECT_EQ(Value(uint16_t{1}).type(), ValueType::kUint16);
  EXPECT_EQ(Value(int16_t{1}).type(), ValueType::kInt16);
  EXPECT_EQ(Value(uint32_t{1}).type(), ValueType::kUint32);
  EXPECT_EQ(Value(int32_t{1}).type(), ValueType::kInt32);
  EXPECT_EQ(Value(1.0f).type(), ValueType::kFloat32);
  EXPECT_EQ(Value(true).type(), ValueType::kBool);
  EXPECT_EQ(Value("s").type(), ValueType::kString);
  EXPECT_EQ(Value(Array{}).type(), ValueType::kArray);
  EXPECT_EQ(Value(uint64_t{1}).type(), ValueType::kUint64);
  EXPECT_EQ(Value(int64_t{1}).type(), ValueType::kInt64);
  EXPECT_EQ(Value(1.0).type(), ValueType::kFloat64);
}

TEST(GgufValue, Conversions) {
  EXPECT_TRUE(Value(int8_t{-1}).is_integer());
  EXPECT_FALSE(Value(true).is_integer());
  EXPECT_FALSE(Value(1.0f).is_integer());
  EXPECT_EQ(Value(int8_t{-1}).as_int(), -1);
  EXPECT_EQ(Value(int8_t{-1}).as_uint(), std::nullopt);
  EXPECT_EQ(Value(std::numeric_limits<uint64_t>::max()).as_int(), std::nullopt);
  EXPECT_EQ(Value(std::numeric_limits<uint64_t>::max()).as_uint(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Value(true).as_int(), std::nullopt);
  EXPECT_EQ(Value(2.5).as_int(), std::nullopt);
  EXPECT_EQ(Value(2.5f).as_float(), 2.5);
  EXPECT_EQ(Value(int32_t{-7}).as_float(), -7.0);
  EXPECT_EQ(Value("x").as_float(), std::nullopt);
  EXPECT_EQ(*Value("x").as_string(), "x");
  EXPECT_EQ(Value(1u).as_string(), nullptr);
  EXPECT_EQ(Value(1u).as_array(), nullptr);
  EXPECT_NE(Value(Array{}).as_array(), nullptr);
}

TEST(GgufValue, Summary) {
  EXPECT_EQ(Value(uint32_t{42}).summary(), "42");
  EXPECT_EQ(Value(int64_t{-5}).summary(), "-5");
  EXPECT_EQ(Value(true).summary(), "true");
  EXPECT_EQ(Value(1e-6f).summary(), "1e-06");
  EXPECT_EQ(Value(0.5).summary(), "0.5");
  EXPECT_EQ(Value("a\"b\n\x01").summary(), "\"a\\\"b\\n\\x01\"");
  EXPECT_EQ(Value(std::string(100, 'x')).summary(), "\"" + std::string(64, 'x') + "\"...");
  Array bools{ValueType::kBool, {Value(true), Value(true), Value(false)}};
  EXPECT_EQ(Value(bools).summary(), "[true, true, false]");
  Array tokens{ValueType::kString, std::vector<Value>(151936, Value("t"))};
  EXPECT_EQ(Value(tokens).summary(), "[151936 strings]");
  EXPECT_EQ(Value(tokens).summary(200000).size() > 1000, false);  // capped even when listing
  Array nested{ValueType::kArray, {Value(Array{ValueType::kInt32, {Value(int32_t{1})}}), Value(Array{})}};
  EXPECT_EQ(Value(nested).summary(), "[[1], []]");
}

TEST(GgufTensorInfo, RowsAndRowBytes) {
  TensorInfo t;
  t.type = TensorType::Q4_K;
  t.dims = {512, 3, 2};
  EXPECT_EQ(t.n_rows(), 6u);
  EXPECT_EQ(t.row_bytes(), 2u * 144u);
  t.type = TensorType::F32;
  t.dims = {7};
  EXPECT_EQ(t.n_rows(), 1u);
  EXPECT_EQ(t.row_bytes(), 28u);
}

File getter_file(std::vector<uint8_t>& storage) {
  Writer w;
  w.set("u8", Value(uint8_t{200}));
  w.set("neg", Value(int32_t{-1}));
  w.set("big", Value(std::numeric_limits<uint64_t>::max()));
  w.set("i64", Value(int64_t{-5}));
  w.set("f32", Value(0.25f));
  w.set("f64", Value(1e-6));
  w.set("f64_huge", Value(1e300));
  w.set("flag", Value(true));
  w.set("name", Value("tiny"));
  w.set("list", Value(Array{ValueType::kInt32, {Value(int32_t{2}), Value(int32_t{1})}}));
  storage = w.to_bytes();
  auto f = File::parse(storage, "getters.gguf");
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return std::move(f.value());
}

void expect_error(const Status& s, ErrorCode code, std::initializer_list<std::string> parts) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
}

TEST(GgufGetters, IntegersWidenWhenTheyFit) {
  std::vector<uint8_t> storage;
  File f = getter_file(storage);
  EXPECT_EQ(f.get_u32("u8").value_or(0), 200u);
  EXPECT_EQ(f.get_u64("u8").value_or(0), 200u);
  EXPECT_EQ(f.get_i64("neg").value_or(0), -1);
  EXPECT_EQ(f.get_i64("i64").value_or(0), -5);
  EXPECT_EQ(f.get_u64("big").value_or(0), std::numeric_limits<uint64_t>::max());
  expect_error(f.get_u32("neg").status(), ErrorCode::kInvalidFile, {"getters.gguf", "'neg'", "-1", "int32", "uint32"});
  expect_error(f.get_u32("big").status(), ErrorCode::kInvalidFile, {"'big'", "18446744073709551615", "uint32"});
  expect_error(f.get_i64("big").status(), ErrorCode::kInvalidFile, {"'big'", "int64"});
  expect_error(f.get_u32("name").status(), ErrorCode::kInvalidFile, {"key 'name': expected uint32, found string"});
  expect_error(f.get_u32("flag").status(), ErrorCode::kInvalidFile, {"expected uint32, found bool"});
  expect_error(f.get_u32("f32").status(), ErrorCode::kInvalidFile, {"expected uint32, found float32"});
  expect_error(f.get_u32("missing").status(), ErrorCode::kNotFound, {"'missing'"});
}

TEST(GgufGetters, OtherTypes) {
  std::vector<uint8_t> storage;
  File f = getter_file(storage);
  EXPECT_EQ(f.get_f32("f32").value_or(0), 0.25f);
  EXPECT_EQ(f.get_f32("f64").value_or(0), 1e-6f);
  expect_error(f.get_f32("f64_huge").status(), ErrorCode::kInvalidFile, {"'f64_huge'", "float32"});
  expect_error(f.get_f32("u8").status(), ErrorCode::kInvalidFile, {"expected float32, found uint8"});
  EXPECT_EQ(f.get_bool("flag").value_or(false), true);
  expect_error(f.get_bool("u8").status(), ErrorCode::kInvalidFile, {"expected bool, found uint8"});
  EXPECT_EQ(f.get_string("name").value_or(""), "tiny");
  expect_error(f.get_string("list").status(), ErrorCode::kInvalidFile, {"expected string, found array"});
  auto list = f.get_array("list");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)->items.size(), 2u);
  expect_error(f.get_array("name").status(), ErrorCode::kInvalidFile, {"expected array, found string"});
  EXPECT_EQ(f.find("name")->summary(), "\"tiny\"");
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

TEST(GgufGetters, Fallbacks) {
  std::vector<uint8_t> storage;
  File f = getter_file(storage);
  EXPECT_EQ(f.get_u32_or("missing", 7).value_or(0), 7u);
  EXPECT_EQ(f.get_u32_or("u8", 7).value_or(0), 200u);
  EXPECT_EQ(f.get_f32_or("missing", 1.5f).value_or(0), 1.5f);
  EXPECT_EQ(f.get_bool_or("missing", true).value_or(false), true);
  EXPECT_EQ(f.get_bool_or("flag", false).value_or(false), true);
  // Present with the wrong type is still an error.
  expect_error(f.get_u32_or("name", 7).status(), ErrorCode::kInvalidFile, {"'name'"});
  expect_error(f.get_f32_or("name", 1.f).status(), ErrorCode::kInvalidFile, {"'name'"});
  expect_error(f.get_bool_or("name", true).status(), ErrorCode::kInvalidFile, {"'name'"});
}

}  // namespace
}  // namespace kazeia::gguf
