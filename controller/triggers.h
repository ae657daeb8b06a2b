// Kernel uevents that make the node republish: the netlink source, the listener that reads it, and the
// coalescer that turns a burst into one pass. (The periodic resync is the workqueue's, node_pass_loop.h.)
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <stop_token>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "controller/uevent_message.h"

namespace liken::controller {

// Calls `fire` once after a burst of Notify calls has been quiet for `quiet`, or at the latest `max_delay`
// after the burst's first Notify. Runs its own thread between Start and Stop. Thread-safe.
class Coalescer {
 public:
  // `clock` must outlive the coalescer.
  Coalescer(Clock* clock, absl::Duration quiet, absl::Duration max_delay, std::function<void()> fire);
  ~Coalescer();  // stops
  // Starts the thread. Call once. Thread-safe.
  void Start();
  // Stops the thread (through its stop token); a pending burst is dropped. Idempotent. Thread-safe.
  void Stop();
  // Records one event of a burst. Thread-safe.
  void Notify();
  // How many times `fire` ran. Thread-safe.
  int fired() const { return fired_.load(); }

 private:
  void Run(std::stop_token stop);

  Clock* const clock_;
  const absl::Duration quiet_;
  const absl::Duration max_delay_;
  const std::function<void()> fire_;
  std::atomic<int> fired_{0};
  absl::Mutex mu_;
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;  // the thread's stop was requested
  absl::Time first_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ScopedClockWaker> waker_;
  std::jthread thread_;  // declared last: stopped and joined first
};

// Where uevent messages come from.
class UeventSource {
 public:
  virtual ~UeventSource() = default;
  // Blocks for the next message. DataLoss when messages were dropped (the kernel's socket buffer
  // overflowed): only a full rescan sees every change; the source stays usable. Cancelled once Close
  // was called. Thread-safe against Close.
  virtual absl::StatusOr<std::string> Receive() = 0;
  // Wakes a blocked Receive and makes later ones return Cancelled. Thread-safe.
  virtual void Close() = 0;
};

// Opens a NETLINK_KOBJECT_UEVENT socket on the kernel's multicast group (in a test under umockdev, the
// testbed's). Needs the host's network namespace. Thread-safe.
absl::StatusOr<std::unique_ptr<UeventSource>> OpenNetlinkUevents();

// Receives uevent counts (for metrics). Must be thread-safe.
class UeventObserver {
 public:
  virtual ~UeventObserver() = default;
  // One uevent was read; `acted` when it was relevant and triggered a resync.
  virtual void OnUevent(bool acted) = 0;
};

// Reads a UeventSource on its own thread, forwards relevant events to a Coalescer; dropped messages
// (DataLoss) also notify it, so the next pass rescans everything. Thread-safe.
class UeventListener {
 public:
  // `source`'s ownership is taken; `coalescer` and `observer` (may be null) must outlive the listener.
  UeventListener(std::unique_ptr<UeventSource> source, Coalescer* coalescer, UeventObserver* observer);
  ~UeventListener();  // stops
  // Starts the reading thread. Call once. Thread-safe.
  void Start();
  // Closes the source (through the thread's stop token) and joins the thread. Idempotent. Thread-safe.
  void Stop();

 private:
  void Run();
  std::unique_ptr<UeventSource> source_;
  Coalescer* const coalescer_;
  UeventObserver* const observer_;
  std::jthread thread_;  // declared last: stopped and joined first
};

}  // namespace liken::controller
