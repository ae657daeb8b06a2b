// Counts the calls of fsync(2), fdatasync(2) and syncfs(2) in a test binary that links file_sync_counter.cc.
#pragma once

#include <cstdint>

namespace liken::testing {

// How many fsync, fdatasync and syncfs calls this process has made since it started (file_sync_counter.cc
// defines those three functions in the test binary, which every caller in the process reaches first; each counts
// the call and makes the system call). Thread-safe.
int64_t FileSyncCalls();

}  // namespace liken::testing
