#include "kazeia/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace kazeia {
namespace {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.to_string(), "ok");
  EXPECT_TRUE(OkStatus().ok());
  EXPECT_TRUE(Status::ok_status().ok());
}

TEST(Status, FactoriesSetCodeAndMessage) {
  EXPECT_EQ(InvalidArgument("a").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(InvalidFile("a").code(), ErrorCode::kInvalidFile);
  EXPECT_EQ(Unsupported("a").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(NotFound("a").code(), ErrorCode::kNotFound);
  EXPECT_EQ(IoError("a").code(), ErrorCode::kIo);
  EXPECT_EQ(OutOfRange("a").code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(Internal("a").code(), ErrorCode::kInternal);
  Status s = InvalidFile("tensor 'x': offset 4096 exceeds file size 100");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "tensor 'x': offset 4096 exceeds file size 100");
  EXPECT_EQ(s.to_string(), "invalid file: tensor 'x': offset 4096 exceeds file size 100");
}

TEST(Status, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kCancelled); ++c) {
    std::string name = error_code_name(static_cast<ErrorCode>(c));
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "unknown error") << c;
  }
  EXPECT_STREQ(error_code_name(ErrorCode::kTimeout), "timeout");
}

TEST(Status, WithContextPrefixesAndKeepsCode) {
  Status s = NotFound("tensor 'blk.0.attn_q.weight'").with_context("loading model.gguf");
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.message(), "loading model.gguf: tensor 'blk.0.attn_q.weight'");
  Status twice = s.with_context("kazeia run");
  EXPECT_EQ(twice.message(), "kazeia run: loading model.gguf: tensor 'blk.0.attn_q.weight'");
  // Context on success stays success, without a message.
  Status ok = OkStatus().with_context("nothing wrong");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(Result, HoldsValueOrError) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  EXPECT_EQ(good.value(), 42);
  EXPECT_TRUE(good.status().ok());
  EXPECT_EQ(good.value_or(7), 42);

  Result<int> bad = OutOfRange("index 9 >= size 3");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(bad.status().message(), "index 9 >= size 3");
  EXPECT_EQ(bad.value_or(7), 7);

  Result<std::string> str = std::string("abc");
  EXPECT_EQ(str->size(), 3u);
}

TEST(Result, OkStatusWithoutValueBecomesInternalError) {
  Result<int> r = OkStatus();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
}

TEST(Result, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 5);
}

Result<int> parse_positive(int x) {
  if (x <= 0) return InvalidArgument("expected a positive number, got " + std::to_string(x));
  return x;
}

Result<int> doubled(int x) {
  KZ_ASSIGN_OR_RETURN(int v, parse_positive(x));
  return v * 2;
}

Result<std::unique_ptr<int>> make_box(int x) {
  if (x < 0) return NotFound("no box");
  return std::make_unique<int>(x);
}

Status use_box(int x, int* out) {
  KZ_ASSIGN_OR_RETURN(std::unique_ptr<int> box, make_box(x));
  KZ_ASSIGN_OR_RETURN(int twice, doubled(*box));  // two in one scope: distinct temporaries
  *out = twice;
  return OkStatus();
}

Status check_both(int a, int b) {
  KZ_RETURN_IF_ERROR(parse_positive(a).status());
  KZ_RETURN_IF_ERROR(parse_positive(b).status().with_context("second argument"));
  return OkStatus();
}

TEST(Result, AssignOrReturnPropagates) {
  Result<int> ok = doubled(21);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 42);

  Result<int> err = doubled(-3);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(err.status().message(), "expected a positive number, got -3");

  int out = 0;
  EXPECT_TRUE(use_box(4, &out).ok());
  EXPECT_EQ(out, 8);
  Status s = use_box(-1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(use_box(0, &out).code(), ErrorCode::kInvalidArgument);
}

TEST(Status, ReturnIfErrorPropagatesWithContext) {
  EXPECT_TRUE(check_both(1, 2).ok());
  EXPECT_EQ(check_both(0, 2).message(), "expected a positive number, got 0");
  EXPECT_EQ(check_both(1, -2).message(), "second argument: expected a positive number, got -2");
}

}  // namespace
}  // namespace kazeia
