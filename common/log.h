// Structured one-line logging: `ts=... level=info msg="..." key=value ...` on stderr.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace liken {

// Severity of a log record; higher verbosity levels are printed only with -v.
enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// One key=value field of a log record.
using LogField = std::pair<std::string_view, std::string>;

// Sets the most verbose level printed (process-wide sink configuration; thread-safe).
void SetLogLevel(LogLevel level);

// Returns the current most verbose level printed. Thread-safe.
LogLevel CurrentLogLevel();

// Writes one record if `level` is enabled. Thread-safe; records never interleave.
void Log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields = {});

// Convenience wrappers around Log(). Thread-safe.
inline void LogError(std::string_view m, std::initializer_list<LogField> f = {}) { Log(LogLevel::kError, m, f); }
inline void LogWarning(std::string_view m, std::initializer_list<LogField> f = {}) { Log(LogLevel::kWarning, m, f); }
inline void LogInfo(std::string_view m, std::initializer_list<LogField> f = {}) { Log(LogLevel::kInfo, m, f); }
inline void LogDebug(std::string_view m, std::initializer_list<LogField> f = {}) { Log(LogLevel::kDebug, m, f); }

}  // namespace liken
