#include "common/workqueue.h"

namespace liken {

WorkQueue::WorkQueue(Clock* clock, std::unique_ptr<RateLimiter> limiter, WorkQueueObserver* observer)
    : clock_(clock), limiter_(std::move(limiter)), observer_(observer),
      waker_(std::make_unique<ScopedClockWaker>(clock, &mu_)) {
  absl::MutexLock lock(&mu_);
  ReportDepthLocked();
}

WorkQueue::~WorkQueue() { waker_.reset(); }

void WorkQueue::ReportDepthLocked() {
  if (observer_ != nullptr) observer_->OnDepth(queue_.size());
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (!dirty_.insert(key).second) return;
  if (processing_.count(key) > 0) return;
  queue_.push_back(key);
  ReportDepthLocked();
}

void WorkQueue::Add(const std::string& key) {
  absl::MutexLock lock(&mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(key);
    return;
  }
  absl::Time ready = clock_->Now() + delay;
  auto it = waiting_.find(key);
  if (it != waiting_.end()) {
    if (it->second <= ready) return;
    waiting_order_.erase({it->second, key});
    it->second = ready;
  } else {
    waiting_.emplace(key, ready);
  }
  waiting_order_.emplace(ready, key);
}

void WorkQueue::AddRateLimited(const std::string& key) {
  absl::Duration delay = limiter_->When(key);
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    if (observer_ != nullptr) observer_->OnRetry();
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) { limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return limiter_->NumRequeues(key); }

void WorkQueue::PromoteDueLocked() {
  absl::Time now = clock_->Now();
  while (!waiting_order_.empty() && waiting_order_.begin()->first <= now) {
    std::string key = waiting_order_.begin()->second;
    waiting_order_.erase(waiting_order_.begin());
    waiting_.erase(key);
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::PopLocked() {
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  ReportDepthLocked();
  return key;
}

std::optional<std::string> WorkQueue::Get() {
  absl::MutexLock lock(&mu_);
  while (true) {
    PromoteDueLocked();
    if (!queue_.empty()) return PopLocked();
    if (shutting_down_) return std::nullopt;
    // Wake on a ready key, shutdown, or a change of the earliest delayed key (an earlier AddAfter).
    std::optional<absl::Time> earliest;
    if (!waiting_order_.empty()) earliest = waiting_order_.begin()->first;
    struct Pred {
      WorkQueue* q;
      std::optional<absl::Time> earliest;
      bool Eval() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
        std::optional<absl::Time> now_earliest;
        if (!q->waiting_order_.empty()) now_earliest = q->waiting_order_.begin()->first;
        return !q->queue_.empty() || q->shutting_down_ || now_earliest != earliest;
      }
    } pred{this, earliest};
    absl::Condition cond(&pred, &Pred::Eval);
    if (!earliest) {
      mu_.Await(cond);
    } else {
      clock_->AwaitWithDeadline(&mu_, cond, *earliest);
    }
  }
}

std::optional<std::string> WorkQueue::TryGet() {
  absl::MutexLock lock(&mu_);
  PromoteDueLocked();
  return PopLocked();
}

void WorkQueue::Done(const std::string& key) {
  absl::MutexLock lock(&mu_);
  processing_.erase(key);
  if (dirty_.count(key) > 0) {
    queue_.push_back(key);
    ReportDepthLocked();
  }
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_order_.clear();
}

void WorkQueue::ShutDownWithDrain() {
  ShutDown();
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::set<std::string>* processing) { return processing->empty(); }, &processing_));
}

bool WorkQueue::ShuttingDown() const {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() {
  absl::MutexLock lock(&mu_);
  PromoteDueLocked();
  return queue_.size();
}

bool WorkQueue::Pending(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  return dirty_.contains(key) || processing_.contains(key);
}

size_t WorkQueue::NumWaiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_.size();
}

std::optional<absl::Time> WorkQueue::NextReadyTime() const {
  absl::MutexLock lock(&mu_);
  if (waiting_order_.empty()) return std::nullopt;
  return waiting_order_.begin()->first;
}

}  // namespace liken
