// Minimal leveled logging to stderr.
//
// The library reports errors as Status values; the log is for what a user
// may want to know but the caller cannot act on (a forced CPU level, a slow
// path taken). Level comes from KAZEIA_LOG (off|error|warn|info|debug,
// default warn), read once on first use; set_log_level() overrides it.
// std-only on purpose: printf-style formatting through vsnprintf.
#pragma once

#include <optional>
#include <string_view>

namespace kazeia {

enum class LogLevel : int { kOff = 0, kError = 1, kWarn = 2, kInfo = 3, kDebug = 4 };

const char* log_level_name(LogLevel level);
// Accepts off|none, error, warn|warning, info, debug (case-insensitive).
std::optional<LogLevel> parse_log_level(std::string_view text);

LogLevel log_level();
void set_log_level(LogLevel level);
inline bool log_enabled(LogLevel level) {
  return level != LogLevel::kOff && static_cast<int>(level) <= static_cast<int>(log_level());
}

// Where formatted lines go; nullptr restores stderr. The sink is called with
// a lock held (lines never interleave), so it must not log itself. Returns
// the previous sink. Meant for tests and for embedding applications.
using LogSink = void (*)(LogLevel level, std::string_view line);
LogSink set_log_sink(LogSink sink);

// One line "kazeia warn: <message>\n"; the newline is added.
void log_message(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace kazeia

// Macros only so that the arguments are not evaluated when the level is off.
#define KZ_LOG(level, ...)                                                   \
  do {                                                                       \
    if (::kazeia::log_enabled(level)) ::kazeia::log_message(level, __VA_ARGS__); \
  } while (0)
#define KZ_LOG_ERROR(...) KZ_LOG(::kazeia::LogLevel::kError, __VA_ARGS__)
#define KZ_LOG_WARN(...) KZ_LOG(::kazeia::LogLevel::kWarn, __VA_ARGS__)
#define KZ_LOG_INFO(...) KZ_LOG(::kazeia::LogLevel::kInfo, __VA_ARGS__)
#define KZ_LOG_DEBUG(...) KZ_LOG(::kazeia::LogLevel::kDebug, __VA_ARGS__)
