// Clock tool and time zones: pinned instants checked by hand, DST edges on
// both hemispheres, the POSIX footer rule, and a cross-check against glibc.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>

#include "agent/tools/clock_tool.h"

namespace kazeia::agent {
namespace {

using std::chrono::system_clock;

system_clock::time_point at(int64_t unix_seconds) { return system_clock::time_point(std::chrono::seconds(unix_seconds)); }

bool have_zone(const char* name) { return std::filesystem::exists(std::string("/usr/share/zoneinfo/") + name); }

// Hand-computed instants (days since 1970 counted by year and month):
constexpr int64_t k2024Feb29_123456Z = 1709210096;   // Thursday
constexpr int64_t k2024Mar31_010000Z = 1711846800;   // EU DST starts
constexpr int64_t k2024Nov03_060000Z = 1730613600;   // US DST ends
constexpr int64_t k2100Jul01_120000Z = 4118126400;   // far past any table
constexpr int64_t k1960Jan01_000000Z = -315619200;

TEST(ClockTool, UtcFormat) {
  json t = describe_time(at(k2024Feb29_123456Z), TimeZone::utc());
  EXPECT_EQ(t["timezone"], "UTC");
  EXPECT_EQ(t["date"], "2024-02-29");
  EXPECT_EQ(t["time"], "12:34:56");
  EXPECT_EQ(t["weekday"], "Thursday");
  EXPECT_EQ(t["utc_offset"], "+00:00");
  EXPECT_EQ(t["iso8601"], "2024-02-29T12:34:56+00:00");
  EXPECT_EQ(t["unix_time"], k2024Feb29_123456Z);
  EXPECT_FALSE(t["dst"].get<bool>());
  EXPECT_EQ(describe_time(at(k1960Jan01_000000Z), TimeZone::utc())["iso8601"], "1960-01-01T00:00:00+00:00");
  EXPECT_EQ(describe_time(at(k1960Jan01_000000Z - 1), TimeZone::utc())["iso8601"], "1959-12-31T23:59:59+00:00");
}

TEST(ClockTool, OffsetFormatting) {
  EXPECT_EQ(format_utc_offset(0), "+00:00");
  EXPECT_EQ(format_utc_offset(19800), "+05:30");
  EXPECT_EQ(format_utc_offset(-12600), "-03:30");
  EXPECT_EQ(format_utc_offset(-561), "-00:09:21");  // Paris mean time
}

TEST(ClockTool, EuropeParisDstStart) {
  if (!have_zone("Europe/Paris")) GTEST_SKIP() << "tz database lacks Europe/Paris";
  Result<TimeZone> paris = TimeZone::load("Europe/Paris");
  ASSERT_TRUE(paris.ok()) << paris.status().message();
  json before = describe_time(at(k2024Mar31_010000Z - 1), *paris);
  EXPECT_EQ(before["iso8601"], "2024-03-31T01:59:59+01:00");
  EXPECT_EQ(before["abbreviation"], "CET");
  EXPECT_FALSE(before["dst"].get<bool>());
  json after = describe_time(at(k2024Mar31_010000Z), *paris);
  EXPECT_EQ(after["iso8601"], "2024-03-31T03:00:00+02:00");
  EXPECT_EQ(after["abbreviation"], "CEST");
  EXPECT_TRUE(after["dst"].get<bool>());
  EXPECT_EQ(after["weekday"], "Sunday");
  // 2100 is past any transition table: the POSIX footer rule decides.
  json future = describe_time(at(k2100Jul01_120000Z), *paris);
  EXPECT_EQ(future["iso8601"], "2100-07-01T14:00:00+02:00");
  EXPECT_EQ(future["weekday"], "Thursday");
}

TEST(ClockTool, NewYorkDstEndAndOtherZones) {
  if (!have_zone("America/New_York")) GTEST_SKIP() << "tz database lacks America/New_York";
  if (!have_zone("Asia/Kolkata")) GTEST_SKIP() << "tz database lacks Asia/Kolkata";
  if (!have_zone("Australia/Sydney")) GTEST_SKIP() << "tz database lacks Australia/Sydney";
  Result<TimeZone> ny = TimeZone::load("America/New_York");
  ASSERT_TRUE(ny.ok());
  EXPECT_EQ(describe_time(at(k2024Nov03_060000Z - 1), *ny)["iso8601"], "2024-11-03T01:59:59-04:00");
  EXPECT_EQ(describe_time(at(k2024Nov03_060000Z), *ny)["iso8601"], "2024-11-03T01:00:00-05:00");
  EXPECT_EQ(describe_time(at(k2024Nov03_060000Z), *ny)["abbreviation"], "EST");
  Result<TimeZone> kolkata = TimeZone::load("Asia/Kolkata");
  ASSERT_TRUE(kolkata.ok());
  EXPECT_EQ(describe_time(at(k2024Feb29_123456Z), *kolkata)["iso8601"], "2024-02-29T18:04:56+05:30");
  // Southern hemisphere: summer time in January.
  Result<TimeZone> sydney = TimeZone::load("Australia/Sydney");
  ASSERT_TRUE(sydney.ok());
  const int64_t jan15 = 1705276800;  // 2024-01-15T00:00:00Z
  const int64_t jul15 = 1721001600;  // 2024-07-15T00:00:00Z
  EXPECT_EQ(describe_time(at(jan15), *sydney)["iso8601"], "2024-01-15T11:00:00+11:00");
  EXPECT_EQ(describe_time(at(jul15), *sydney)["iso8601"], "2024-07-15T10:00:00+10:00");
}

TEST(ClockTool, PosixRuleStrings) {
  Result<TimeZone> us = TimeZone::load("EST5EDT,M3.2.0,M11.1.0");
  ASSERT_TRUE(us.ok()) << us.status().message();
  EXPECT_EQ(describe_time(at(1719835200), *us)["iso8601"], "2024-07-01T08:00:00-04:00");  // 12:00Z
  EXPECT_EQ(describe_time(at(1704110400), *us)["iso8601"], "2024-01-01T07:00:00-05:00");  // 12:00Z
  Result<PosixTimeZoneRule> india = PosixTimeZoneRule::parse("<+0530>-5:30");
  ASSERT_TRUE(india.ok());
  EXPECT_EQ(india->lookup(0).utc_offset_seconds, 19800);
  EXPECT_EQ(india->lookup(0).abbreviation, "+0530");
  EXPECT_FALSE(PosixTimeZoneRule::parse("EST").ok());
  EXPECT_FALSE(PosixTimeZoneRule::parse("EST5EDT,M13.1.0,M11.1.0").ok());
}

TEST(ClockTool, RejectsBadNamesWithoutTouchingFiles) {
  for (const char* name : {"Mars/Olympus", "../../etc/passwd", "/etc/passwd", "Europe/../../../etc/shadow", ""}) {
    Result<TimeZone> zone = TimeZone::load(name);
    ASSERT_FALSE(zone.ok()) << name;
    EXPECT_EQ(zone.status().code(), ErrorCode::kNotFound) << name;
  }
  EXPECT_FALSE(TimeZone::from_tzif("not a tzif file at all, padding padding padding", "x").ok());
  EXPECT_FALSE(TimeZone::from_tzif("TZif2", "x").ok());
}

TEST(ClockTool, AgreesWithGlibcAcrossCenturies) {
  // glibc reads the same files through its own parser; any disagreement in
  // offset, DST flag or abbreviation is a bug in ours. Single-threaded here,
  // so touching TZ is safe.
  const char* zones[] = {"Europe/Paris",     "America/New_York", "Australia/Sydney", "Asia/Kolkata",
                         "America/St_Johns", "Pacific/Chatham",  "Europe/Dublin",    "America/Sao_Paulo",
                         "Africa/Casablanca", "Asia/Tehran",     "Pacific/Apia",     "Antarctica/Troll"};
  const char* saved = std::getenv("TZ");
  const std::string saved_tz = saved ? saved : "";
  int checked = 0;
  for (const char* name : zones) {
    if (!have_zone(name)) continue;
    Result<TimeZone> zone = TimeZone::load(name);
    ASSERT_TRUE(zone.ok()) << name << ": " << zone.status().message();
    setenv("TZ", name, 1);
    tzset();
    // 1902..2099 in steps of ~5 days and 7 hours, hitting many transitions.
    for (int64_t t = -2100000000; t < 4100000000; t += 5 * 86400 + 7 * 3600 + 13) {
      time_t tt = static_cast<time_t>(t);
      std::tm tm{};
      ASSERT_NE(localtime_r(&tt, &tm), nullptr);
      LocalTimeType ours = zone->lookup(t);
      ASSERT_EQ(ours.utc_offset_seconds, tm.tm_gmtoff) << name << " at " << t;
      ASSERT_EQ(ours.is_dst, tm.tm_isdst > 0) << name << " at " << t;
      ASSERT_EQ(ours.abbreviation, tm.tm_zone) << name << " at " << t;
      ++checked;
    }
  }
  if (saved) {
    setenv("TZ", saved_tz.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
  if (checked == 0) GTEST_SKIP() << "no tz database";
}

TEST(ClockTool, ToolWithPinnedClock) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_clock_tool([] { return at(k2024Feb29_123456Z); })).ok());
  ToolResult utc = registry.dispatch({"c", "clock", json{{"timezone", "UTC"}}});
  ASSERT_TRUE(utc.ok) << utc.content;
  EXPECT_EQ(json::parse(utc.content)["iso8601"], "2024-02-29T12:34:56+00:00");
  ToolResult bad = registry.dispatch({"c", "clock", json{{"timezone", "Mars/Olympus"}}});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.content,
            "error: unknown time zone 'Mars/Olympus'; use an IANA name such as 'Europe/Paris', "
            "'America/New_York' or 'UTC'");
  if (have_zone("Asia/Tokyo")) {
    ToolResult tokyo = registry.dispatch({"c", "clock", json{{"timezone", "Asia/Tokyo"}}});
    EXPECT_EQ(json::parse(tokyo.content)["iso8601"], "2024-02-29T21:34:56+09:00");
  }
}

TEST(ClockTool, SystemZoneFromTzEnvironment) {
  if (!have_zone("Europe/Paris")) GTEST_SKIP();
  const char* saved = std::getenv("TZ");
  const std::string saved_tz = saved ? saved : "";
  setenv("TZ", ":Europe/Paris", 1);
  EXPECT_EQ(system_time_zone_name(), "Europe/Paris");
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_clock_tool([] { return at(k2024Feb29_123456Z); })).ok());
  json local = json::parse(registry.dispatch({"c", "clock", json::object()}).content);
  EXPECT_EQ(local["timezone"], "Europe/Paris");
  EXPECT_EQ(local["iso8601"], "2024-02-29T13:34:56+01:00");
  setenv("TZ", "/usr/share/zoneinfo/Asia/Tokyo", 1);
  EXPECT_EQ(system_time_zone_name(), "Asia/Tokyo");
  if (saved) {
    setenv("TZ", saved_tz.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
}

}  // namespace
}  // namespace kazeia::agent
