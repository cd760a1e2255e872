#include "agent/tools/time_zone.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent/text_util.h"

namespace kazeia::agent {
namespace {

namespace chr = std::chrono;

// ---------------------------------------------------------------------------
// POSIX TZ strings

class PosixParser {
 public:
  explicit PosixParser(std::string_view text) : text_(text) {}

  Result<PosixTimeZoneRule> parse() {
    PosixTimeZoneRule rule;
    KZ_ASSIGN_OR_RETURN(rule.standard.abbreviation, parse_abbreviation());
    KZ_ASSIGN_OR_RETURN(int32_t std_offset, parse_offset(/*required=*/true));
    rule.standard.utc_offset_seconds = -std_offset;  // POSIX counts west as positive
    if (at_end()) return rule;
    LocalTimeType dst;
    dst.is_dst = true;
    KZ_ASSIGN_OR_RETURN(dst.abbreviation, parse_abbreviation());
    dst.utc_offset_seconds = rule.standard.utc_offset_seconds + 3600;
    if (!at_end() && peek() != ',') {
      KZ_ASSIGN_OR_RETURN(int32_t dst_offset, parse_offset(true));
      dst.utc_offset_seconds = -dst_offset;
    }
    rule.daylight = dst;
    if (at_end()) {
      // No rule given: POSIX leaves it implementation-defined; glibc uses the
      // US rules, and so do we.
      rule.dst_start = {PosixTimeZoneRule::Date::Kind::kMonthWeekDay, 0, 3, 2, 7200};
      rule.dst_end = {PosixTimeZoneRule::Date::Kind::kMonthWeekDay, 0, 11, 1, 7200};
      return rule;
    }
    if (peek() != ',') return error("expected ',' before the DST start rule");
    ++pos_;
    KZ_ASSIGN_OR_RETURN(rule.dst_start, parse_date());
    if (at_end() || peek() != ',') return error("expected ',' before the DST end rule");
    ++pos_;
    KZ_ASSIGN_OR_RETURN(rule.dst_end, parse_date());
    if (!at_end()) return error("unexpected trailing text");
    return rule;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  Status error(const std::string& what) const {
    return InvalidArgument("POSIX TZ string '" + std::string(text_) + "': " + what);
  }

  Result<std::string> parse_abbreviation() {
    if (!at_end() && peek() == '<') {  // quoted form: <+0530>
      size_t close = text_.find('>', pos_);
      if (close == std::string_view::npos) return error("unterminated '<'");
      std::string name(text_.substr(pos_ + 1, close - pos_ - 1));
      pos_ = close + 1;
      if (name.empty()) return error("empty zone abbreviation");
      return name;
    }
    size_t start = pos_;
    while (!at_end() && std::isalpha(static_cast<unsigned char>(peek()))) ++pos_;
    if (pos_ - start < 3) return error("zone abbreviation must have at least 3 letters");
    return std::string(text_.substr(start, pos_ - start));
  }

  // [+-]hh[:mm[:ss]], hours up to 167 (RFC 8536 allows that range in rules).
  Result<int32_t> parse_hms(int max_hours) {
    int sign = 1;
    if (!at_end() && (peek() == '+' || peek() == '-')) sign = text_[pos_++] == '-' ? -1 : 1;
    int32_t parts[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      if (i > 0) {
        if (at_end() || peek() != ':') break;
        ++pos_;
      }
      size_t start = pos_;
      int32_t value = 0;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek())) && pos_ - start < 3) {
        value = value * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start) return error("expected digits");
      parts[i] = value;
    }
    if (parts[0] > max_hours || parts[1] > 59 || parts[2] > 59) return error("time out of range");
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  }

  Result<int32_t> parse_offset(bool required) {
    if (at_end()) {
      if (required) return error("missing UTC offset");
      return 0;
    }
    return parse_hms(24);
  }

  Result<PosixTimeZoneRule::Date> parse_date() {
    using Kind = PosixTimeZoneRule::Date::Kind;
    PosixTimeZoneRule::Date date;
    auto number = [&]() -> Result<int> {
      size_t start = pos_;
      int value = 0;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek())) && pos_ - start < 3) {
        value = value * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start) return error("expected a number in a DST rule");
      return value;
    };
    if (at_end()) return error("missing DST rule");
    if (peek() == 'M') {
      ++pos_;
      date.kind = Kind::kMonthWeekDay;
      KZ_ASSIGN_OR_RETURN(date.month, number());
      if (at_end() || peek() != '.') return error("expected '.' in Mm.w.d");
      ++pos_;
      KZ_ASSIGN_OR_RETURN(date.week, number());
      if (at_end() || peek() != '.') return error("expected '.' in Mm.w.d");
      ++pos_;
      KZ_ASSIGN_OR_RETURN(date.day, number());
      if (date.month < 1 || date.month > 12 || date.week < 1 || date.week > 5 || date.day > 6) {
        return error("Mm.w.d out of range");
      }
    } else if (peek() == 'J') {
      ++pos_;
      date.kind = Kind::kJulianNoLeap;
      KZ_ASSIGN_OR_RETURN(date.day, number());
      if (date.day < 1 || date.day > 365) return error("Jn out of range");
    } else {
      date.kind = Kind::kZeroBasedDay;
      KZ_ASSIGN_OR_RETURN(date.day, number());
      if (date.day > 365) return error("day out of range");
    }
    date.time_seconds = 7200;
    if (!at_end() && peek() == '/') {
      ++pos_;
      KZ_ASSIGN_OR_RETURN(date.time_seconds, parse_hms(167));
    }
    return date;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// Days since 1970-01-01 of the rule's date in `year`.
int64_t rule_day(const PosixTimeZoneRule::Date& date, int year) {
  using Kind = PosixTimeZoneRule::Date::Kind;
  const chr::year y{year};
  const int64_t jan1 = chr::sys_days(y / chr::January / 1).time_since_epoch().count();
  switch (date.kind) {
    case Kind::kJulianNoLeap:  // Feb 29 is never counted
      return jan1 + date.day - 1 + ((y.is_leap() && date.day >= 60) ? 1 : 0);
    case Kind::kZeroBasedDay:
      return jan1 + date.day;
    case Kind::kMonthWeekDay: {
      const chr::month m{static_cast<unsigned>(date.month)};
      const chr::weekday wd{static_cast<unsigned>(date.day)};
      chr::sys_days day = date.week == 5
                              ? chr::sys_days(chr::year_month_weekday_last(y, m, chr::weekday_last(wd)))
                              : chr::sys_days(chr::year_month_weekday(y, m, wd[static_cast<unsigned>(date.week)]));
      return day.time_since_epoch().count();
    }
  }
  return jan1;
}

int civil_year(int64_t unix_seconds) {
  const int64_t days = unix_seconds >= 0 ? unix_seconds / 86400 : -((-unix_seconds + 86399) / 86400);
  chr::year_month_day ymd{chr::sys_days(chr::days(days))};
  return static_cast<int>(ymd.year());
}

// ---------------------------------------------------------------------------
// TZif

class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}
  bool has(size_t n) const { return n <= data_.size() - pos_; }
  size_t pos() const { return pos_; }
  void skip(size_t n) { pos_ += n; }
  uint8_t u8() { return static_cast<uint8_t>(data_[pos_++]); }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | u8();
    return v;
  }
  int64_t i64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | u8();
    return static_cast<int64_t>(v);
  }
  std::string_view rest() const { return data_.substr(pos_); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

struct TzifHeader {
  char version = 0;
  uint32_t isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0;
};

Result<TzifHeader> read_header(ByteReader& in, const std::string& name) {
  if (!in.has(44)) return InvalidFile("zone '" + name + "': truncated TZif header");
  if (in.rest().substr(0, 4) != "TZif") return InvalidFile("zone '" + name + "': not a TZif file");
  in.skip(4);
  TzifHeader h;
  h.version = static_cast<char>(in.u8());
  in.skip(15);
  h.isutcnt = in.u32();
  h.isstdcnt = in.u32();
  h.leapcnt = in.u32();
  h.timecnt = in.u32();
  h.typecnt = in.u32();
  h.charcnt = in.u32();
  if (h.typecnt == 0 || h.typecnt > 256 || h.timecnt > 100000 || h.charcnt > 4096 || h.leapcnt > 10000) {
    return InvalidFile("zone '" + name + "': implausible TZif counts");
  }
  return h;
}

size_t data_block_size(const TzifHeader& h, size_t time_size) {
  return h.timecnt * time_size + h.timecnt + h.typecnt * 6 + h.charcnt + h.leapcnt * (time_size + 4) +
         h.isstdcnt + h.isutcnt;
}

bool valid_zone_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '/' || name.back() == '/') return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '+') return false;
    }
    start = end + 1;
  }
  return true;
}

std::string zoneinfo_dir() {
  const char* dir = std::getenv("TZDIR");
  return (dir != nullptr && *dir != '\0') ? std::string(dir) : std::string("/usr/share/zoneinfo");
}

std::optional<std::string> read_small_file(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data;
  data.resize(limit + 1);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (data.size() > limit) return std::nullopt;
  return data;
}

// "/usr/share/zoneinfo/Europe/Paris" -> "Europe/Paris"
std::string strip_zoneinfo_prefix(std::string name) {
  size_t at = name.find("zoneinfo/");
  if (at != std::string::npos) name = name.substr(at + 9);
  for (std::string_view prefix : {"posix/", "right/"}) {
    if (name.starts_with(prefix)) name = name.substr(prefix.size());
  }
  return name;
}

}  // namespace

Result<PosixTimeZoneRule> PosixTimeZoneRule::parse(std::string_view text) { return PosixParser(text).parse(); }

LocalTimeType PosixTimeZoneRule::lookup(int64_t t) const {
  if (!daylight) return standard;
  // Transitions of the local year t falls in; the start is given in local
  // standard time, the end in local daylight time.
  const int year = civil_year(t + standard.utc_offset_seconds);
  const int64_t start = rule_day(dst_start, year) * 86400 + dst_start.time_seconds - standard.utc_offset_seconds;
  const int64_t end = rule_day(dst_end, year) * 86400 + dst_end.time_seconds - daylight->utc_offset_seconds;
  const bool in_dst = start < end ? (t >= start && t < end)      // northern hemisphere
                                  : !(t >= end && t < start);    // southern: DST spans new year
  return in_dst ? *daylight : standard;
}

TimeZone TimeZone::utc() {
  TimeZone zone;
  zone.name_ = "UTC";
  zone.types_.push_back(LocalTimeType{0, false, "UTC"});
  return zone;
}

Result<TimeZone> TimeZone::from_tzif(std::string_view data, std::string name) {
  ByteReader in(data);
  KZ_ASSIGN_OR_RETURN(TzifHeader h, read_header(in, name));
  size_t time_size = 4;
  if (h.version >= '2') {
    // Skip the 32-bit block; the 64-bit one that follows covers all times.
    if (!in.has(data_block_size(h, 4))) return InvalidFile("zone '" + name + "': truncated TZif data");
    in.skip(data_block_size(h, 4));
    KZ_ASSIGN_OR_RETURN(h, read_header(in, name));
    time_size = 8;
  }
  if (!in.has(data_block_size(h, time_size))) return InvalidFile("zone '" + name + "': truncated TZif data");
  TimeZone zone;
  zone.name_ = std::move(name);
  zone.transitions_.resize(h.timecnt);
  for (auto& t : zone.transitions_) t = time_size == 8 ? in.i64() : static_cast<int32_t>(in.u32());
  zone.transition_types_.resize(h.timecnt);
  for (auto& type : zone.transition_types_) {
    type = in.u8();
    if (type >= h.typecnt) return InvalidFile("zone '" + zone.name_ + "': transition type out of range");
  }
  std::vector<std::pair<int32_t, std::pair<bool, uint8_t>>> raw_types(h.typecnt);
  for (auto& [offset, rest] : raw_types) {
    offset = static_cast<int32_t>(in.u32());
    rest.first = in.u8() != 0;
    rest.second = in.u8();
  }
  std::string_view chars = in.rest().substr(0, h.charcnt);
  in.skip(h.charcnt);
  for (const auto& [offset, rest] : raw_types) {
    if (rest.second >= chars.size()) return InvalidFile("zone '" + zone.name_ + "': abbreviation index out of range");
    std::string_view abbr = chars.substr(rest.second);
    abbr = abbr.substr(0, abbr.find('\0'));
    zone.types_.push_back(LocalTimeType{offset, rest.first, std::string(abbr)});
  }
  in.skip(h.leapcnt * (time_size + 4) + h.isstdcnt + h.isutcnt);
  if (!std::is_sorted(zone.transitions_.begin(), zone.transitions_.end())) {
    return InvalidFile("zone '" + zone.name_ + "': transitions out of order");
  }
  // Footer (v2+): "\n<POSIX TZ string>\n", possibly empty.
  if (time_size == 8 && in.has(1) && in.rest().front() == '\n') {
    std::string_view footer = in.rest().substr(1);
    footer = footer.substr(0, footer.find('\n'));
    if (!footer.empty()) {
      auto rule = PosixTimeZoneRule::parse(footer);
      if (!rule.ok()) return InvalidFile("zone '" + zone.name_ + "': " + rule.status().message());
      zone.rule_ = std::move(*rule);
    }
  }
  return zone;
}

Result<TimeZone> TimeZone::load_file(const std::string& path, std::string name) {
  std::optional<std::string> data = read_small_file(path, 1 << 20);
  if (!data) return NotFound("cannot read time zone file " + path);
  return from_tzif(*data, std::move(name));
}

Result<TimeZone> TimeZone::load(std::string_view raw_name) {
  std::string name(trim(raw_name));
  if (name.starts_with(":")) name.erase(0, 1);
  if (name == "UTC" || name == "Etc/UTC" || name == "Z" || name == "GMT" || name == "Etc/GMT" || name == "UCT" ||
      name == "Zulu" || name == "Etc/Zulu" || name == "Universal") {
    TimeZone zone = utc();
    zone.name_ = name == "Z" ? "UTC" : name;
    return zone;
  }
  if (valid_zone_name(name)) {
    auto zone = load_file(zoneinfo_dir() + "/" + name, name);
    if (zone.ok() || zone.status().code() != ErrorCode::kNotFound) return zone;
  }
  // Not a zone file: perhaps a POSIX TZ string ("EST5EDT,M3.2.0,M11.1.0").
  if (auto rule = PosixTimeZoneRule::parse(name); rule.ok()) {
    TimeZone zone;
    zone.name_ = name;
    zone.types_.push_back(rule->standard);
    zone.rule_ = std::move(*rule);
    return zone;
  }
  return NotFound("unknown time zone '" + std::string(utf8_prefix(name, 80)) +
                  "'; use an IANA name such as 'Europe/Paris', 'America/New_York' or 'UTC'");
}

LocalTimeType TimeZone::lookup(int64_t t) const {
  if (transitions_.empty()) return rule_ ? rule_->lookup(t) : types_.front();
  if (t < transitions_.front()) return types_.front();  // RFC 8536: type 0 before the first transition
  if (t >= transitions_.back() && rule_) return rule_->lookup(t);
  // Last transition at or before t.
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), t);
  size_t index = static_cast<size_t>(it - transitions_.begin()) - 1;
  return types_[transition_types_[index]];
}

std::string system_time_zone_name() {
  if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
    std::string name = tz;
    if (name.starts_with(":")) name.erase(0, 1);
    return strip_zoneinfo_prefix(name);
  }
  if (std::optional<std::string> text = read_small_file("/etc/timezone", 256)) {
    std::string name(trim(*text));
    if (!name.empty()) return name;
  }
  std::array<char, 512> target{};
  ssize_t n = readlink("/etc/localtime", target.data(), target.size() - 1);
  if (n > 0) return strip_zoneinfo_prefix(std::string(target.data(), static_cast<size_t>(n)));
  return "UTC";
}

}  // namespace kazeia::agent
