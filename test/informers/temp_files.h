// File helpers for the informers tests: a fresh temp directory, a whole-file write, a chosen mtime.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace liken::testing {

// Creates a new directory /tmp/<prefix>-XXXXXX and returns its path. Thread-safe.
inline std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  return ::mkdtemp(pattern.data());
}

// Replaces the contents of `path` with `text`. Thread-compatible.
inline void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// Gives `path` a modification time no earlier write can have had (whatever the clock's granularity); a failure
// fails the test. Thread-compatible.
inline void SetMtime(const std::string& path, time_t seconds) {
  struct timespec times[2] = {{0, UTIME_NOW}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

}  // namespace liken::testing
