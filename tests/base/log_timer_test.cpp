#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/timer.h"

namespace kazeia {
namespace {

std::vector<std::string>* g_lines = nullptr;
void capture(LogLevel, std::string_view line) { g_lines->emplace_back(line); }

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = log_level();
    g_lines = &lines_;
    saved_sink_ = set_log_sink(capture);
  }
  void TearDown() override {
    set_log_sink(saved_sink_);
    g_lines = nullptr;
    set_log_level(saved_level_);
  }
  std::vector<std::string> lines_;
  LogLevel saved_level_ = LogLevel::kWarn;
  LogSink saved_sink_ = nullptr;
};

TEST_F(LogTest, FormatsOneLine) {
  set_log_level(LogLevel::kDebug);
  log_message(LogLevel::kWarn, "tensor '%s' has %d dims", "blk.0", 3);
  KZ_LOG_ERROR("plain");
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[0], "kazeia warn: tensor 'blk.0' has 3 dims\n");
  EXPECT_EQ(lines_[1], "kazeia error: plain\n");
}

TEST_F(LogTest, LevelFilters) {
  set_log_level(LogLevel::kWarn);
  KZ_LOG_DEBUG("d");
  KZ_LOG_INFO("i");
  KZ_LOG_WARN("w");
  KZ_LOG_ERROR("e");
  EXPECT_EQ(lines_.size(), 2u);
  EXPECT_TRUE(log_enabled(LogLevel::kError));
  EXPECT_FALSE(log_enabled(LogLevel::kInfo));
  EXPECT_FALSE(log_enabled(LogLevel::kOff));

  set_log_level(LogLevel::kOff);
  KZ_LOG_ERROR("nothing");
  EXPECT_EQ(lines_.size(), 2u);
}

TEST_F(LogTest, DisabledMacroDoesNotEvaluateArguments) {
  set_log_level(LogLevel::kError);
  int evaluated = 0;
  KZ_LOG_DEBUG("%d", ++evaluated);
  EXPECT_EQ(evaluated, 0);
  KZ_LOG_ERROR("%d", ++evaluated);
  EXPECT_EQ(evaluated, 1);
}

TEST_F(LogTest, LongMessagesAreNotTruncated) {
  set_log_level(LogLevel::kInfo);
  std::string big(10000, 'x');
  KZ_LOG_INFO("%s|", big.c_str());
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "kazeia info: " + big + "|\n");
}

TEST_F(LogTest, ThreadsNeverInterleave) {
  set_log_level(LogLevel::kInfo);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) KZ_LOG_INFO("thread %d line %d %s", t, i, "payload-payload-payload");
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(lines_.size(), 800u);
  for (const auto& l : lines_) {
    EXPECT_EQ(l.rfind("kazeia info: thread ", 0), 0u) << l;
    EXPECT_EQ(l.find('\n'), l.size() - 1) << l;
  }
}

TEST(LogLevel, Parse) {
  EXPECT_EQ(parse_log_level("debug"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("INFO"), LogLevel::kInfo);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::kWarn);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::kWarn);
  EXPECT_EQ(parse_log_level("error"), LogLevel::kError);
  EXPECT_EQ(parse_log_level("off"), LogLevel::kOff);
  EXPECT_EQ(parse_log_level("none"), LogLevel::kOff);
  EXPECT_FALSE(parse_log_level("verbose").has_value());
  EXPECT_FALSE(parse_log_level("").has_value());
  EXPECT_STREQ(log_level_name(LogLevel::kWarn), "warn");
}

TEST(Timer, MonotonicAndMeasuresSleep) {
  int64_t a = now_ns();
  int64_t b = now_ns();
  EXPECT_LE(a, b);
  Stopwatch sw;
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  EXPECT_GE(sw.elapsed_ns(), 3'000'000);
  EXPECT_GE(sw.elapsed_ms(), 3.0);
  EXPECT_NEAR(sw.elapsed_s() * 1e3, sw.elapsed_ms(), 1.0);
  int64_t lap = sw.lap_ns();
  EXPECT_GE(lap, 3'000'000);
  EXPECT_LT(sw.elapsed_ns(), lap);  // lap restarted the watch
  sw.reset();
  EXPECT_LT(sw.elapsed_us(), 1e6);
  EXPECT_GE(now_us() * 1000, a);
}

}  // namespace
}  // namespace kazeia
