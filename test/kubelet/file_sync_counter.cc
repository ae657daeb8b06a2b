// The test binary's own fsync, fdatasync and syncfs: the product's static libraries are linked into the binary,
// so their calls resolve here instead of to the C library; each is counted and passed on as the system call.
#include "test/kubelet/file_sync_counter.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace liken::testing {
namespace {

std::atomic<int64_t>& Calls() {
  static std::atomic<int64_t> calls{0};
  return calls;
}

}  // namespace

int64_t FileSyncCalls() { return Calls().load(); }

}  // namespace liken::testing

extern "C" {

int fsync(int fd) {
  liken::testing::Calls().fetch_add(1);
  return static_cast<int>(::syscall(SYS_fsync, fd));
}

int fdatasync(int fd) {
  liken::testing::Calls().fetch_add(1);
  return static_cast<int>(::syscall(SYS_fdatasync, fd));
}

int syncfs(int fd) {
  liken::testing::Calls().fetch_add(1);
  return static_cast<int>(::syscall(SYS_syncfs, fd));
}

}  // extern "C"
