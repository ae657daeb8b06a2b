// A Scanner that returns a settable inventory, for tests.
#pragma once

#include <atomic>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "discovery/scanner.h"

namespace liken::testing {

// Returns whatever inventory was set last. Thread-safe.
class FakeScanner : public discovery::Scanner {
 public:
  // Replaces what the next Scan() returns. Thread-safe.
  void Set(discovery::Inventory inventory) {
    absl::MutexLock lock(&mu_);
    inventory_ = std::move(inventory);
  }
  // Makes the next scans fail (or succeed again). Thread-safe.
  void SetFailure(absl::Status status) {
    absl::MutexLock lock(&mu_);
    failure_ = std::move(status);
  }
  // Returns the set inventory. Thread-safe.
  absl::StatusOr<discovery::Inventory> Scan() override {
    scans_.fetch_add(1);
    absl::MutexLock lock(&mu_);
    if (!failure_.ok()) return failure_;
    return inventory_;
  }
  // How many scans ran. Thread-safe.
  int scans() const { return scans_.load(); }

 private:
  absl::Mutex mu_;
  discovery::Inventory inventory_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> scans_{0};
};

}  // namespace liken::testing
