// The loop that runs the node pass: one key, a worker, retries with backoff, a periodic resync.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <stop_token>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/workqueue.h"
#include "informers/informer.h"

namespace liken::controller {

// Marks `status` (not OK) as permanent: the node pass's own desired slices fail its validation, so a retry with the
// same inventory cannot succeed (nothing of the pool was written). Thread-safe (pure).
absl::Status PermanentError(absl::Status status);

// True when `status` was marked by PermanentError. Thread-safe (pure).
bool IsPermanent(const absl::Status& status);

// Runs the node pass from a workqueue (sample-controller style): every trigger enqueues the one key; the
// worker calls the pass; a failure retries with per-key exponential backoff (a write the API server refused with
// 422 included: the pool is incomplete until it is written), except a PermanentError (it waits for the next trigger
// or the resync); success schedules the next periodic resync. Thread-safe.
class NodePassLoop : public informers::EventHandler {
 public:
  static constexpr char kKey[] = "slices";

  // `queue` must outlive the controller. `pass` is the node pass (NodeReconciler::RunPass), called on the
  // worker thread, one at a time.
  NodePassLoop(WorkQueue* queue, absl::Duration resync_period, std::function<absl::Status()> pass);
  ~NodePassLoop() override;  // stops

  // Asks for a pass as soon as possible. Thread-safe.
  void Enqueue();

  // Asks for a pass once `delay` has passed on the queue's clock (an earlier request stands). Thread-safe.
  void EnqueueAfter(absl::Duration delay);

  // Starts the worker (and enqueues the first pass). Call once. Thread-safe.
  void Start();

  // Shuts the queue down (a pass in progress finishes) and joins the worker. Idempotent. Thread-safe.
  void Stop();

  // Handles one queued key if one is ready; false when none was. For tests without the worker.
  bool ProcessOneForTest();

  // Passes run so far (successful or not). Thread-safe.
  int passes() const { return passes_.load(); }

  // informers::EventHandler: any change to our slices (someone else's write, a deletion) enqueues a pass.
  void OnAdd(const informers::ObjectPtr&) override { Enqueue(); }
  void OnUpdate(const informers::ObjectPtr&, const informers::ObjectPtr&) override { Enqueue(); }
  void OnDelete(const informers::ObjectPtr&) override { Enqueue(); }

 private:
  void Process(const std::string& key);

  WorkQueue* const queue_;
  const absl::Duration resync_period_;
  const std::function<absl::Status()> pass_;
  std::atomic<int> passes_{0};
  std::jthread worker_;  // stopping it shuts the queue down
};

}  // namespace liken::controller
