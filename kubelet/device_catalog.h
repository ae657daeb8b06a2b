// The node's latest device inventory as the kubelet plugin sees it: fed by the reconcile loop, refreshed
// by a rescan when a claim names a device the snapshot lacks or whose sysfs directory vanished.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"

namespace liken::kubelet {

// The clock scans are stamped with (discovery/scanner.h).
using ScanClock = discovery::ScanClock;

// One immutable inventory, indexed by device name.
struct InventorySnapshot {
  discovery::Inventory inventory;
  absl::flat_hash_map<std::string, size_t> by_name;  // index into inventory.published
  uint64_t generation = 0;                           // 0: nothing fed or scanned yet
  ScanClock::time_point scan_started{};              // when the scan behind `inventory` began

  // The published device named `name`, or nullptr. Thread-safe (immutable).
  const discovery::PublishedDevice* Find(const std::string& name) const;
};

// Holds the latest inventory and resolves device names against it. Thread-safe.
class DeviceCatalog {
 public:
  // `scanner` may be null (no rescans); it must outlive the catalog.
  explicit DeviceCatalog(discovery::Scanner* scanner);

  // Replaces the snapshot with `inventory`, whose scan began at `scan_started`, and wakes watchers; returns
  // false (and changes nothing) when the current snapshot comes from a scan that began later, e.g. a rescan
  // a prepare ran while the caller's scan was in flight. Thread-safe.
  bool Update(discovery::Inventory inventory, ScanClock::time_point scan_started);

  // The current snapshot (never null). Thread-safe.
  std::shared_ptr<const InventorySnapshot> Current() const;

  // Returns the named devices as present now, in order. A name the snapshot lacks, or whose sysfs directory
  // is gone, causes one rescan (concurrent callers share it); the sysfs check applies to the rescanned
  // snapshot too. NotFound names every device still missing;
  // a failed rescan is returned as Unavailable. Thread-safe.
  absl::StatusOr<std::vector<discovery::PublishedDevice>> Resolve(const std::vector<std::string>& names);

  // Blocks until the snapshot is newer than `generation`, Close() was called, or `timeout` passed; returns
  // the current generation. Thread-safe.
  uint64_t AwaitNewerThan(uint64_t generation, absl::Duration timeout);

  // Wakes every AwaitNewerThan() now and makes later calls return at once (shutdown). Thread-safe.
  void Close();

  // True after Close(). Thread-safe.
  bool closed() const;

 private:
  // Scans again unless a snapshot newer than `seen` appeared meanwhile; returns the current snapshot.
  absl::StatusOr<std::shared_ptr<const InventorySnapshot>> Rescan(uint64_t seen);

  discovery::Scanner* const scanner_;
  absl::Mutex scan_mu_;  // serialises rescans; taken before mu_
  mutable absl::Mutex mu_;
  std::shared_ptr<const InventorySnapshot> current_ ABSL_GUARDED_BY(mu_);
  uint64_t next_generation_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace liken::kubelet
