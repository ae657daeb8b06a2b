#include "controller/node_pass_loop.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {

NodePassLoop::NodePassLoop(WorkQueue* queue, absl::Duration resync_period, std::function<absl::Status()> pass)
    : queue_(queue), resync_period_(resync_period), pass_(std::move(pass)) {}

NodePassLoop::~NodePassLoop() { Stop(); }

namespace {
constexpr char kPermanentPayload[] = "type.liken.sh/permanent";
}  // namespace

absl::Status PermanentError(absl::Status status) {
  status.SetPayload(kPermanentPayload, absl::Cord("1"));
  return status;
}

bool IsPermanent(const absl::Status& status) { return status.GetPayload(kPermanentPayload).has_value(); }

void NodePassLoop::Enqueue() {
  queue_->Add(kKey);
}

void NodePassLoop::EnqueueAfter(absl::Duration delay) { queue_->AddAfter(kKey, delay); }

void NodePassLoop::Start() {
  Enqueue();
  worker_ = std::jthread([this](std::stop_token stop) {
    std::stop_callback shut_down(stop, [this] { queue_->ShutDown(); });  // wakes Get
    while (auto key = queue_->Get()) Process(*key);
  });
}

void NodePassLoop::Stop() {
  queue_->ShutDown();  // also when no worker was started
  worker_.request_stop();
  if (worker_.joinable()) worker_.join();
}

bool NodePassLoop::ProcessOneForTest() {
  auto key = queue_->TryGet();
  if (!key) return false;
  Process(*key);
  return true;
}

void NodePassLoop::Process(const std::string& key) {
  absl::Status result = pass_();
  passes_.fetch_add(1);
  if (result.ok()) {
    queue_->Forget(key);
    queue_->AddAfter(key, resync_period_);  // the safety net: a full pass at least this often
  } else if (IsPermanent(result)) {
    // The pass's own desired slices fail its validation: nothing of the pool was written (it keeps its last
    // generation, whole), and retrying with the same inventory cannot fix it; the next trigger (a hot-plug) or the
    // periodic resync tries again.
    LogError("node pass: desired slices are invalid; nothing of the pool was written, next try at the next "
             "hot-plug or resync",
             {{"error", std::string(result.message())}});
    queue_->Forget(key);
    queue_->AddAfter(key, resync_period_);
  } else {
    LogWarning("node pass failed; retrying",
               {{"error", result.ToString()}, {"retries", absl::StrCat(queue_->NumRequeues(key))}});
    queue_->AddRateLimited(key);
  }
  queue_->Done(key);
}

}  // namespace liken::controller
