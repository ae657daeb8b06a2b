#include "controller/slice_controller.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {

SliceController::SliceController(SliceSync* sync, WorkQueue* queue, absl::Duration resync_period,
                                 std::function<void()> after_sync)
    : sync_(sync), queue_(queue), resync_period_(resync_period), after_sync_(std::move(after_sync)) {}

SliceController::~SliceController() { Stop(); }

void SliceController::Enqueue() {
  queue_->Add(kKey);
}

void SliceController::Start() {
  Enqueue();
  worker_ = std::jthread([this](std::stop_token stop) {
    std::stop_callback shut_down(stop, [this] { queue_->ShutDown(); });  // wakes Get
    while (auto key = queue_->Get()) Process(*key);
  });
}

void SliceController::Stop() {
  queue_->ShutDown();  // also when no worker was started
  worker_.request_stop();
  if (worker_.joinable()) worker_.join();
}

bool SliceController::ProcessOneForTest() {
  auto key = queue_->TryGet();
  if (!key) return false;
  Process(*key);
  return true;
}

void SliceController::Process(const std::string& key) {
  // The periodic resync does not read the Node again: its UID is read once, and again only when a slice it
  // owned was deleted behind our back (the garbage collector's answer to a Node re-created under a new UID)
  // or an update found the slice gone. An idle node makes no API request.
  auto result = sync_->Sync();
  passes_.fetch_add(1);
  if (result.ok()) {
    if (result->created + result->updated + result->deleted > 0) {
      LogInfo("slices published", {{"created", absl::StrCat(result->created)},
                                   {"updated", absl::StrCat(result->updated)},
                                   {"deleted", absl::StrCat(result->deleted)}});
    }
    queue_->Forget(key);
    queue_->AddAfter(key, resync_period_);  // the safety net: a full pass at least this often
  } else if (result.status().code() == absl::StatusCode::kInvalidArgument) {
    // Permanent (an invalid pool from discovery): retrying with backoff cannot fix it; the periodic
    // resync or the next trigger (a hot-plug, a config change) tries again.
    LogError("slice sync: desired slices are invalid; not retrying before the next resync",
             {{"error", result.status().ToString()}});
    queue_->Forget(key);
    queue_->AddAfter(key, resync_period_);
  } else {
    LogWarning("slice sync failed; retrying", {{"error", result.status().ToString()},
                                               {"retries", absl::StrCat(queue_->NumRequeues(key))}});
    queue_->AddRateLimited(key);
  }
  if (after_sync_) after_sync_();
  queue_->Done(key);
}

}  // namespace liken::controller
