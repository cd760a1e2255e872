// Time zones from the system tz database, without touching process state.
//
// libstdc++ 12 has no C++20 tzdb (std::chrono::locate_zone arrived in GCC
// 13), and the classic route (setenv("TZ") + tzset + localtime_r) changes
// process-wide state that other threads read concurrently: not acceptable in
// a tool that may run in parallel with others. So this reads the compiled
// zone files (TZif, RFC 8536) under /usr/share/zoneinfo (or $TZDIR) itself:
// the transition table for the past, and the POSIX TZ rule in the file's
// footer for times after the last transition. A POSIX TZ string
// ("EST5EDT,M3.2.0,M11.1.0", "UTC0") is accepted as a zone too.
//
// Leap-second ("right/") zones are read but their leap records are ignored:
// times are POSIX times, as everywhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/status.h"

namespace kazeia::agent {

struct LocalTimeType {
  int32_t utc_offset_seconds = 0;  // east of UTC is positive
  bool is_dst = false;
  std::string abbreviation;        // "CEST", "+0530"
};

// A POSIX TZ rule: "std offset [dst [offset] [,start[/time],end[/time]]]".
struct PosixTimeZoneRule {
  struct Date {
    enum class Kind { kJulianNoLeap, kZeroBasedDay, kMonthWeekDay } kind = Kind::kMonthWeekDay;
    int day = 0;                // Jn: 1..365; n: 0..365; M: weekday 0 (Sunday)..6
    int month = 0, week = 0;    // M form only: month 1..12, week 1..5 (5 = last)
    int32_t time_seconds = 7200;  // local time of the change; may be < 0 or > 24 h
  };
  LocalTimeType standard;
  std::optional<LocalTimeType> daylight;
  Date dst_start, dst_end;

  static Result<PosixTimeZoneRule> parse(std::string_view text);
  LocalTimeType lookup(int64_t unix_seconds) const;
};

class TimeZone {
 public:
  static TimeZone utc();
  // "Europe/Paris", "UTC", "Etc/GMT+5", or a POSIX TZ string. IANA names are
  // validated (no "..", no absolute paths) before any file is opened.
  static Result<TimeZone> load(std::string_view name);
  // A TZif file at an explicit path, reported under `name`.
  static Result<TimeZone> load_file(const std::string& path, std::string name);
  // Parses TZif bytes (exposed for tests).
  static Result<TimeZone> from_tzif(std::string_view data, std::string name);

  const std::string& name() const { return name_; }
  LocalTimeType lookup(int64_t unix_seconds) const;

 private:
  std::string name_;
  std::vector<int64_t> transitions_;       // ascending POSIX times
  std::vector<uint8_t> transition_types_;  // index into types_ per transition
  std::vector<LocalTimeType> types_;
  std::optional<PosixTimeZoneRule> rule_;  // after the last transition
};

// The process's zone name: $TZ (leading ':' and a ".../zoneinfo/" prefix
// stripped), else /etc/timezone, else the /etc/localtime symlink target,
// else "UTC".
std::string system_time_zone_name();

}  // namespace kazeia::agent
