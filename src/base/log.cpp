#include "base/log.h"

#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kazeia {
namespace {

std::mutex& sink_mutex() {
  static std::mutex mu;
  return mu;
}
LogSink g_sink = nullptr;  // guarded by sink_mutex()

// The threshold is read on every log call from any thread: an atomic, relaxed
// (it orders nothing else). Initialised from KAZEIA_LOG on first use.
std::atomic<int>& level_storage() {
  static std::atomic<int> level = [] {
    LogLevel lvl = LogLevel::kWarn;
    if (const char* env = std::getenv("KAZEIA_LOG"); env && *env) {
      if (auto parsed = parse_log_level(env)) {
        lvl = *parsed;
      } else {
        std::fprintf(stderr, "kazeia warn: KAZEIA_LOG='%s' not understood "
                             "(off|error|warn|info|debug); using warn\n", env);
      }
    }
    return static_cast<int>(lvl);
  }();
  return level;
}

}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kOff: return "off";
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "?";
}

std::optional<LogLevel> parse_log_level(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "off" || s == "none") return LogLevel::kOff;
  if (s == "error") return LogLevel::kError;
  if (s == "warn" || s == "warning") return LogLevel::kWarn;
  if (s == "info") return LogLevel::kInfo;
  if (s == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

LogLevel log_level() { return static_cast<LogLevel>(level_storage().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) {
  level_storage().store(static_cast<int>(level), std::memory_order_relaxed);
}

LogSink set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  LogSink old = g_sink;
  g_sink = sink;
  return old;
}

void log_message(LogLevel level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  // Format outside the lock: two passes of vsnprintf (size, then text).
  std::string line = std::string("kazeia ") + log_level_name(level) + ": ";
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n > 0) {
    size_t prefix = line.size();
    line.resize(prefix + static_cast<size_t>(n) + 1);
    std::vsnprintf(line.data() + prefix, static_cast<size_t>(n) + 1, fmt, args);
    line.resize(prefix + static_cast<size_t>(n));
  }
  va_end(args);
  line += '\n';

  // One write per line under a lock, so lines from threads never interleave.
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (g_sink) {
    g_sink(level, line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

}  // namespace kazeia
