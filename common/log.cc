#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace liken {
namespace {

// The sink is the process's stderr, a process-wide resource; the level and the
// write lock describe that sink and therefore live beside it.
std::atomic<int>& LevelStorage() {
  static std::atomic<int> level{static_cast<int>(LogLevel::kInfo)};
  return level;
}

std::mutex& SinkMutex() {
  static std::mutex mu;
  return mu;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "info";
}

// Quotes a value when it holds spaces, quotes, '=' or control characters.
std::string Quote(std::string_view value) {
  bool needs = value.empty();
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20) needs = true;
  }
  if (!needs) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

void SetLogLevel(LogLevel level) { LevelStorage().store(static_cast<int>(level)); }

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(LevelStorage().load()); }

void Log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields) {
  if (static_cast<int>(level) > LevelStorage().load()) return;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[64];
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  std::string line = std::string("ts=") + ts + " level=" + LevelName(level) + " msg=" + Quote(message);
  for (const auto& [key, value] : fields) {
    line += ' ';
    line += key;
    line += '=';
    line += Quote(value);
  }
  line += '\n';
  std::lock_guard<std::mutex> lock(SinkMutex());
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace liken
