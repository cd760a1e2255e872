// The `clock` tool: current date and time in the system zone or a named one.
//
// Zones come from time_zone.h (the system tz database read directly; no
// process-wide TZ changes), so this tool is safe to run in parallel with
// others. The wall clock is injectable for tests.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "agent/tool_registry.h"
#include "agent/tools/time_zone.h"

namespace kazeia::agent {

using WallClock = std::function<std::chrono::system_clock::time_point()>;

// {"timezone", "abbreviation", "utc_offset" ("+05:30"), "dst", "date"
// ("2024-03-31"), "time" ("03:00:00"), "weekday", "iso8601"
// ("2024-03-31T03:00:00+02:00"), "unix_time"}. Sub-second parts are dropped.
json describe_time(std::chrono::system_clock::time_point when, const TimeZone& zone);

// "+02:00", "-03:30", "+00:00"
std::string format_utc_offset(int32_t seconds);

// Tool "clock": {"timezone"?: IANA name}. Without an argument it reports the
// system zone (system_time_zone_name(), UTC if that cannot be loaded).
Tool make_clock_tool(WallClock now = [] { return std::chrono::system_clock::now(); });

}  // namespace kazeia::agent
