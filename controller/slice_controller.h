// The reconcile loop around SliceSync: one key, a worker, retries with backoff, a periodic resync.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <stop_token>
#include <thread>

#include "absl/time/time.h"
#include "controller/slice_sync.h"
#include "common/workqueue.h"
#include "informers/informer.h"

namespace liken::controller {

// Drives SliceSync from a workqueue (sample-controller style): every trigger enqueues the one key;
// the worker syncs; failures retry with per-key exponential backoff; success schedules the next
// periodic resync. Thread-safe.
class SliceController : public informers::EventHandler {
 public:
  static constexpr char kKey[] = "slices";

  // `sync` and `queue` must outlive the controller. `after_sync` (may be empty) runs after each pass,
  // successful or not, on the worker thread (the claim refresh hooks in there).
  SliceController(SliceSync* sync, WorkQueue* queue, absl::Duration resync_period,
                  std::function<void()> after_sync = {});
  ~SliceController() override;  // stops

  // Asks for a pass as soon as possible. Thread-safe.
  void Enqueue();

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

  SliceSync* const sync_;
  WorkQueue* const queue_;
  const absl::Duration resync_period_;
  const std::function<void()> after_sync_;
  std::atomic<int> passes_{0};
  std::jthread worker_;  // stopping it shuts the queue down
};

}  // namespace liken::controller
