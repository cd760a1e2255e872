#include "agent/tools/clock_tool.h"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "base/log.h"

namespace kazeia::agent {

namespace chr = std::chrono;

std::string format_utc_offset(int32_t seconds) {
  const char sign = seconds < 0 ? '-' : '+';
  const int32_t magnitude = std::abs(seconds);
  std::array<char, 16> buffer{};
  if (magnitude % 60 != 0) {  // a few historical zones have second offsets
    std::snprintf(buffer.data(), buffer.size(), "%c%02d:%02d:%02d", sign, magnitude / 3600, magnitude / 60 % 60,
                  magnitude % 60);
  } else {
    std::snprintf(buffer.data(), buffer.size(), "%c%02d:%02d", sign, magnitude / 3600, magnitude / 60 % 60);
  }
  return buffer.data();
}

json describe_time(chr::system_clock::time_point when, const TimeZone& zone) {
  const int64_t unix_seconds = chr::floor<chr::seconds>(when.time_since_epoch()).count();
  const LocalTimeType type = zone.lookup(unix_seconds);
  const chr::sys_seconds local{chr::seconds(unix_seconds + type.utc_offset_seconds)};
  const chr::sys_days day = chr::floor<chr::days>(local);
  const chr::year_month_day ymd{day};
  const chr::hh_mm_ss<chr::seconds> hms{local - day};
  static constexpr std::array<const char*, 7> kWeekdays = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                           "Thursday", "Friday", "Saturday"};
  std::array<char, 32> date{};
  std::array<char, 16> time{};
  std::snprintf(date.data(), date.size(), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  std::snprintf(time.data(), time.size(), "%02d:%02d:%02d", static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()));
  const std::string offset = format_utc_offset(type.utc_offset_seconds);
  return json{{"timezone", zone.name()},
              {"abbreviation", type.abbreviation},
              {"utc_offset", offset},
              {"dst", type.is_dst},
              {"date", date.data()},
              {"time", time.data()},
              {"weekday", kWeekdays[chr::weekday(day).c_encoding()]},
              {"iso8601", std::string(date.data()) + "T" + time.data() + offset},
              {"unix_time", unix_seconds}};
}

Tool make_clock_tool(WallClock now) {
  Tool tool;
  tool.name = "clock";
  tool.description =
      "Get the current date, time, weekday and UTC offset, in the local time zone or in the "
      "given IANA time zone (e.g. \"Asia/Tokyo\").";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {
      "timezone": {"type": "string", "minLength": 1, "maxLength": 64,
                   "description": "IANA time zone name such as \"Europe/Paris\"; default: local"}
    },
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(2000);
  tool.handler = [now = std::move(now)](const json& args, const ToolContext&) -> Result<json> {
    const auto when = now();
    if (args.contains("timezone")) {
      KZ_ASSIGN_OR_RETURN(TimeZone zone, TimeZone::load(args.at("timezone").get<std::string>()));
      return describe_time(when, zone);
    }
    const std::string name = system_time_zone_name();
    Result<TimeZone> zone = TimeZone::load(name);
    if (!zone.ok()) {
      KZ_LOG_WARN("clock: system time zone '%s' unusable (%s); using UTC", name.c_str(),
                  zone.status().message().c_str());
      return describe_time(when, TimeZone::utc());
    }
    return describe_time(when, *zone);
  };
  return tool;
}

}  // namespace kazeia::agent
