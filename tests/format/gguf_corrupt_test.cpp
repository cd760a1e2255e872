// Hostile and broken files, built byte by byte: each must give an error that
// names the key, tensor or number at fault, and none may crash (the
// sanitizer build runs these too).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_data.h"
#include "format/gguf.h"
#include "format/gguf_test_builder.h"

namespace kazeia::gguf {
namespace {

using ::kazeia::testing::GgufBytes;
using ::kazeia::testing::shared_model;

constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ4_0 = 2;
constexpr uint64_t k2p60 = 1ull << 60;

// Parses a heap copy of exactly these bytes, so that the sanitizer catches a
// read one past the end.
Status parse_status(const std::vector<uint8_t>& bytes, const ParseLimits& limits = {}) {
  std::vector<uint8_t> copy(bytes);
  auto f = File::parse(copy, "bad.gguf", limits);
  return f.ok() ? OkStatus() : f.status();
}

void expect_error(const std::vector<uint8_t>& bytes, ErrorCode code, std::initializer_list<std::string> parts,
                  const ParseLimits& limits = {}) {
  Status s = parse_status(bytes, limits);
  ASSERT_EQ(s.code(), code) << (s.ok() ? "parsed without error" : s.to_string());
  EXPECT_EQ(s.message().rfind("bad.gguf: ", 0), 0u) << s.message();  // names the source
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
}

// One key, one F32 tensor [8] at offset 0: the base the corruptions start from.
GgufBytes minimal_file(uint64_t offset = 0, uint32_t type = kF32, std::vector<uint64_t> dims = {8}) {
  GgufBytes b;
  b.header(1, 1).kv_str("general.architecture", "t").tensor_info("w", dims, type, offset).pad_to(32).zeros(32);
  return b;
}

TEST(GgufCorrupt, MinimalFileIsValid) {
  // Guards the cases below: each differs from this in one point only.
  EXPECT_TRUE(parse_status(minimal_file().bytes()).ok()) << parse_status(minimal_file().bytes()).to_string();
}

TEST(GgufCorrupt, BadMagic) {
  auto bytes = minimal_file().bytes();
  bytes[3] = 'X';
  expect_error(bytes, ErrorCode::kInvalidFile, {"not a GGUF file", "magic is 0x58554747"});
}

TEST(GgufCorrupt, UnsupportedVersions) {
  for (uint32_t v : {0u, 1u, 4u, 1000u}) {
    GgufBytes b;
    b.header(0, 0, v);
    expect_error(b.bytes(), ErrorCode::kUnsupported, {"GGUF version " + std::to_string(v), "2 and 3"});
  }
  GgufBytes be;
  be.header(0, 0, 0x03000000u);
  expect_error(be.bytes(), ErrorCode::kUnsupported, {"big-endian"});
}

TEST(GgufCorrupt, TruncatedHeader) {
  GgufBytes b;
  b.u32(kMagic).u32(3).u32(0);
  expect_error(b.bytes(), ErrorCode::kInvalidFile,
               {"truncated while reading header (tensor count): need 8 bytes at offset 8, file has 12"});
  expect_error({'G', 'G'}, ErrorCode::kInvalidFile, {"magic", "need 4 bytes at offset 0, file has 2"});
  expect_error({}, ErrorCode::kInvalidFile, {"file has 0"});
}

TEST(GgufCorrupt, TruncatedMetadataValue) {
  GgufBytes b;
  b.header(0, 1).key("k", ValueType::kString).u64(10).u8('a').u8('b').u8('c');
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"truncated while reading metadata key 'k'", "need 10 bytes"});
}

TEST(GgufCorrupt, TruncatedArrayItemNamesItsIndex) {
  GgufBytes b;
  b.header(0, 1).key("tokenizer.ggml.tokens", ValueType::kArray).u32(8).u64(3).str("hello").str("world");
  size_t end = b.size();
  expect_error(b.bytes(), ErrorCode::kInvalidFile,
               {"truncated while reading metadata key 'tokenizer.ggml.tokens' (array item 2 of 3): need 8 bytes at "
                "offset " + std::to_string(end) + ", file has " + std::to_string(end)});
}

TEST(GgufCorrupt, TruncatedTensorInfo) {
  GgufBytes b;
  b.header(1, 0).str("blk.0.attn_q.weight").u32(3).u64(64).u64(64);  // third dim missing
  expect_error(b.bytes(), ErrorCode::kInvalidFile,
               {"truncated while reading tensor 'blk.0.attn_q.weight'", "need 8 bytes"});
}

TEST(GgufCorrupt, TruncatedTensorData) {
  auto bytes = minimal_file().bytes();
  bytes.erase(bytes.end() - 4, bytes.end());
  expect_error(bytes, ErrorCode::kInvalidFile,
               {"tensor 'w': data [offset 0, size 32) exceeds the data section of 28 bytes"});
}

TEST(GgufCorrupt, StringLengthPastEof) {
  GgufBytes key;
  key.header(0, 1).u64(1ull << 40).zeros(16);
  expect_error(key.bytes(), ErrorCode::kInvalidFile, {"metadata key #0 of 1", "need 1099511627776 bytes"});
  GgufBytes name;
  name.header(1, 0).u64(~0ull).zeros(32);
  expect_error(name.bytes(), ErrorCode::kInvalidFile, {"tensor info #0 of 1", "need 18446744073709551615 bytes"});
}

TEST(GgufCorrupt, HugeArrayCounts) {
  for (uint32_t elem : {4u /*uint32*/, 8u /*string*/, 9u /*array*/, 0u /*uint8*/}) {
    GgufBytes b;
    b.header(0, 1).key("arr", ValueType::kArray).u32(elem).u64(k2p60).zeros(64);
    expect_error(b.bytes(), ErrorCode::kInvalidFile, {"'arr'", "count 1152921504606846976", "needs at least"});
  }
  GgufBytes overflow;  // count * 8 does not fit in 64 bits
  overflow.header(0, 1).key("arr", ValueType::kArray).u32(10).u64(~0ull).zeros(64);
  expect_error(overflow.bytes(), ErrorCode::kInvalidFile, {"'arr'", "count 18446744073709551615", "2^64 or more"});
}

TEST(GgufCorrupt, HugeTensorAndKeyCounts) {
  GgufBytes t;
  t.header(k2p60, 0).zeros(64);
  expect_error(t.bytes(), ErrorCode::kInvalidFile, {"tensor count 1152921504606846976"});
  GgufBytes kv;
  kv.header(0, k2p60).zeros(64);
  expect_error(kv.bytes(), ErrorCode::kInvalidFile, {"metadata key count 1152921504606846976"});
  GgufBytes bytes_short;  // within the limit, but the file cannot hold them
  bytes_short.header(1000, 0).zeros(64);
  expect_error(bytes_short.bytes(), ErrorCode::kInvalidFile, {"tensor count 1000 needs at least 32000 bytes"});
}

TEST(GgufCorrupt, ParseLimits) {
  GgufBytes b;
  b.header(2, 0).tensor_info("a", {8}, kF32, 0).tensor_info("b", {8}, kF32, 32).pad_to(32).zeros(64);
  ASSERT_TRUE(parse_status(b.bytes()).ok());
  ParseLimits one_tensor;
  one_tensor.max_tensors = 1;
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"tensor count 2 exceeds the limit of 1"}, one_tensor);
  ParseLimits no_kv;
  no_kv.max_kv = 0;
  expect_error(minimal_file().bytes(), ErrorCode::kInvalidFile, {"metadata key count 1 exceeds the limit of 0"}, no_kv);
  ParseLimits two_dims;
  two_dims.max_dims = 2;
  expect_error(minimal_file(0, kF32, {2, 2, 2}).bytes(), ErrorCode::kInvalidFile, {"n_dims 3", "(1..2)"}, two_dims);
}

TEST(GgufCorrupt, DimensionProductOverflow) {
  expect_error(minimal_file(0, kF32, {1ull << 32, 1ull << 32}).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w'", "[4294967296, 4294967296]", "overflows"});
  expect_error(minimal_file(0, kF32, {1ull << 63}).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w'", "[9223372036854775808]", "overflows int64"});
  // Fits in elements but not in bytes: F32 at 2^62 elements.
  expect_error(minimal_file(0, kF32, {1ull << 62}).bytes(), ErrorCode::kInvalidFile, {"tensor 'w'", "byte size"});
}

TEST(GgufCorrupt, EmptyTensorsAreAllowedButStillChecked) {
  // ggml allows a zero dimension; the tensor then has no bytes.
  GgufBytes b;
  b.header(1, 0).tensor_info("empty", {0, 5}, kF32, 0).pad_to(32);
  std::vector<uint8_t> copy = b.bytes();
  auto f = File::parse(copy);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->tensors()[0].n_elements, 0u);
  EXPECT_EQ(f->tensors()[0].n_bytes, 0u);
  EXPECT_EQ(f->tensors()[0].n_rows(), 5u);
  // The other dimensions may not overflow behind the zero.
  expect_error(minimal_file(0, kF32, {0, 1ull << 40, 1ull << 40}).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w'", "[0, 1099511627776, 1099511627776]", "overflows"});
}

TEST(GgufCorrupt, DimensionCount) {
  expect_error(minimal_file(0, kF32, {1, 1, 1, 1, 8}).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w': n_dims 5 is out of range (1..4)"});
  expect_error(minimal_file(0, kF32, {}).bytes(), ErrorCode::kInvalidFile, {"tensor 'w': n_dims 0"});
}

TEST(GgufCorrupt, OffsetOutOfRange) {
  expect_error(minimal_file(1024).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w': data [offset 1024, size 32) exceeds the data section of 32 bytes"});
  expect_error(minimal_file(~0ull - 31).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w'", "offset 18446744073709551584"});
}

TEST(GgufCorrupt, MisalignedOffset) {
  expect_error(minimal_file(4).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w': offset 4 is not a multiple of the alignment 32"});
}

TEST(GgufCorrupt, OverlappingTensors) {
  GgufBytes b;
  b.header(2, 0).tensor_info("a", {16}, kF32, 0).tensor_info("b", {8}, kF32, 32).pad_to(32).zeros(96);
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"tensors 'a' [0, 64) and 'b' [32, 64) overlap"});
  // Listed in reverse file order: found after sorting by offset.
  GgufBytes r;
  r.header(2, 0).tensor_info("b", {8}, kF32, 32).tensor_info("a", {16}, kF32, 0).pad_to(32).zeros(96);
  expect_error(r.bytes(), ErrorCode::kInvalidFile, {"'a'", "'b'", "overlap"});
}

TEST(GgufCorrupt, DuplicateTensorName) {
  GgufBytes b;
  b.header(2, 0).tensor_info("w", {8}, kF32, 0).tensor_info("w", {8}, kF32, 32).pad_to(32).zeros(64);
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"duplicate tensor name 'w'"});
}

TEST(GgufCorrupt, DuplicateKey) {
  GgufBytes b;
  b.header(0, 2).kv_u32("qwen3.block_count", 2).kv_u32("qwen3.block_count", 3);
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"duplicate metadata key 'qwen3.block_count'"});
}

TEST(GgufCorrupt, UnknownTensorType) {
  for (uint32_t id : {4u, 5u, 31u, 1000u}) {
    expect_error(minimal_file(0, id).bytes(), ErrorCode::kInvalidFile,
                 {"tensor 'w': unknown tensor type id " + std::to_string(id)});
  }
}

TEST(GgufCorrupt, Ne0NotMultipleOfBlockSize) {
  expect_error(minimal_file(0, kQ4_0, {48, 2}).bytes(), ErrorCode::kInvalidFile,
               {"tensor 'w': ne0 = 48 is not a multiple of the block size 32 of Q4_0"});
}

TEST(GgufCorrupt, BadAlignment) {
  for (uint32_t a : {0u, 3u, 48u}) {
    GgufBytes b;
    b.header(0, 1).kv_u32("general.alignment", a);
    expect_error(b.bytes(), ErrorCode::kInvalidFile,
                 {"key 'general.alignment': value " + std::to_string(a) + " is not a nonzero power of two"});
  }
  GgufBytes wrong_type;
  wrong_type.header(0, 1).key("general.alignment", ValueType::kUint64).u64(32);
  expect_error(wrong_type.bytes(), ErrorCode::kInvalidFile, {"'general.alignment': expected uint32, found uint64"});
}

TEST(GgufCorrupt, AlignmentIsHonoured) {
  // With alignment 64 an offset of 32 is misaligned; with 16 the data starts earlier.
  GgufBytes b;
  b.header(1, 1).kv_u32("general.alignment", 64).tensor_info("w", {8}, kF32, 32).pad_to(64).zeros(64);
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"offset 32 is not a multiple of the alignment 64"});
  GgufBytes ok;
  ok.header(1, 1).kv_u32("general.alignment", 16).tensor_info("w", {8}, kF32, 16).pad_to(16).zeros(48);
  std::vector<uint8_t> copy = ok.bytes();
  auto f = File::parse(copy);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->alignment(), 16u);
  EXPECT_EQ(f->data_offset() % 16, 0u);
  EXPECT_EQ(f->tensors()[0].data, copy.data() + f->data_offset() + 16);
}

// An array of arrays `levels` deep, the innermost holding one uint8.
GgufBytes nested_arrays(int levels) {
  GgufBytes b;
  b.header(0, 1).key("deep", ValueType::kArray);
  for (int i = 1; i < levels; ++i) b.u32(static_cast<uint32_t>(ValueType::kArray)).u64(1);
  b.u32(static_cast<uint32_t>(ValueType::kUint8)).u64(1).u8(7);
  return b;
}

TEST(GgufCorrupt, NestingTooDeep) {
  EXPECT_TRUE(parse_status(nested_arrays(8).bytes()).ok()) << parse_status(nested_arrays(8).bytes()).to_string();
  expect_error(nested_arrays(9).bytes(), ErrorCode::kInvalidFile,
               {"'deep'", "(array item 0 of 1, item 0 of 1", "nested more than 8 levels"});
  expect_error(nested_arrays(100000).bytes(), ErrorCode::kInvalidFile, {"nested more than 8 levels"});
}

TEST(GgufCorrupt, BoolByteOtherThanZeroOrOne) {
  GgufBytes b;
  b.header(0, 1).key("flag", ValueType::kBool).u8(2);
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"metadata key 'flag': bool byte 2 at offset 40 is not 0 or 1"});
  GgufBytes arr;
  arr.header(0, 1).key("flags", ValueType::kArray).u32(7).u64(2).u8(1).u8(255);
  expect_error(arr.bytes(), ErrorCode::kInvalidFile, {"'flags' (array item 1 of 2)", "bool byte 255"});
}

TEST(GgufCorrupt, UnknownValueType) {
  GgufBytes b;
  b.header(0, 1).str("k").u32(13).u32(0);
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"metadata key 'k': unknown value type 13"});
  GgufBytes arr;
  arr.header(0, 1).key("a", ValueType::kArray).u32(0xFFFFFFFFu).u64(0);
  expect_error(arr.bytes(), ErrorCode::kInvalidFile, {"'a'", "unknown value type 4294967295"});
}

TEST(GgufCorrupt, HostileNamesAreEscapedAndCut) {
  GgufBytes b;
  std::string key = "bad\n\x01'" + std::string(1000, 'k');
  b.header(0, 2).kv_u32(key, 1).kv_u32(key, 2);
  Status s = parse_status(b.bytes());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidFile);
  EXPECT_NE(s.message().find("'bad\\x0a\\x01\\x27kkk"), std::string::npos) << s.message();
  EXPECT_LT(s.message().size(), 300u);
}

TEST(GgufCorrupt, DataSectionPastEndOfFile) {
  GgufBytes b;
  b.header(1, 0).tensor_info("w", {8}, kF32, 0);  // no padding, no data
  expect_error(b.bytes(), ErrorCode::kInvalidFile, {"data section starts at offset 64", "file has 57"});
}

// ---- truncations --------------------------------------------------------

// End of the last tensor's data: every shorter prefix must be refused.
uint64_t required_size(const File& f) {
  uint64_t end = 0;
  for (const auto& t : f.tensors()) end = std::max(end, f.data_offset() + t.offset + t.n_bytes);
  return end;
}

void expect_prefix_result(const std::vector<uint8_t>& full, size_t len, uint64_t required) {
  std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<ptrdiff_t>(len));
  auto f = File::parse(prefix, "prefix");
  if (len < required) {
    ASSERT_FALSE(f.ok()) << "a prefix of " << len << " bytes parsed";
    EXPECT_EQ(f.status().code(), ErrorCode::kInvalidFile) << len << ": " << f.status().to_string();
  } else {
    EXPECT_TRUE(f.ok()) << len << ": " << f.status().to_string();
  }
}

std::vector<uint8_t> small_generated_file() {
  Writer w;
  w.set("general.architecture", Value("tiny"));
  w.set("tiny.block_count", Value(uint32_t{2}));
  w.set("tiny.eps", Value(1e-6f));
  w.set("tiny.flags", Value(Array{ValueType::kBool, {Value(true), Value(false)}}));
  w.set("tiny.tokens", Value(Array{ValueType::kString, {Value("a"), Value("bc"), Value("")}}));
  w.set("tiny.nested", Value(Array{ValueType::kArray, {Value(Array{ValueType::kInt16, {Value(int16_t{-3})}})}}));
  EXPECT_TRUE(w.add_tensor("a", TensorType::F32, {4, 2}, std::vector<uint8_t>(32, 1)).ok());
  EXPECT_TRUE(w.add_tensor("b", TensorType::Q8_0, {32}, std::vector<uint8_t>(34, 2)).ok());
  EXPECT_TRUE(w.add_tensor("c", TensorType::F16, {3}, std::vector<uint8_t>(6, 3)).ok());
  return w.to_bytes();
}

TEST(GgufTruncation, EveryPrefixOfASmallGeneratedFile) {
  auto full = small_generated_file();
  auto f = File::parse(full);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  uint64_t required = required_size(*f);
  ASSERT_GT(required, f->data_offset());
  for (size_t len = 0; len <= full.size(); ++len) expect_prefix_result(full, len, required);
}

TEST(GgufTruncation, EverySingleByteCorruptionOfTheHeaderIsHandled) {
  // Not every change is an error (a changed letter in a key is still a
  // valid file); the point is that none crashes or reads out of bounds.
  auto full = small_generated_file();
  auto f = File::parse(full);
  ASSERT_TRUE(f.ok());
  size_t failures = 0;
  for (size_t i = 0; i < f->data_offset(); ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0x01}, uint8_t{0x7F}, uint8_t{0xFF}}) {
      std::vector<uint8_t> copy(full);
      copy[i] = v;
      failures += !File::parse(copy).ok();
    }
  }
  EXPECT_GT(failures, f->data_offset());  // most header bytes matter
}

TEST(GgufTruncation, EvenlySpacedPrefixesOfARealFile) {
  KZ_REQUIRE_SHARED_DATA();
  auto f = File::open(shared_model("qwen3-kq-q4_k_m.gguf"));
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  std::vector<uint8_t> full(f->bytes().begin(), f->bytes().end());
  uint64_t required = required_size(*f);
  constexpr size_t kCuts = 200;
  for (size_t i = 0; i < kCuts; ++i) expect_prefix_result(full, full.size() * i / kCuts, required);
  // The metadata and tensor infos are where a reader goes wrong: cut there too.
  for (size_t i = 0; i < kCuts; ++i) expect_prefix_result(full, f->data_offset() * i / kCuts, required);
  expect_prefix_result(full, required - 1, required);
  expect_prefix_result(full, full.size(), required);
}

}  // namespace
}  // namespace kazeia::gguf
