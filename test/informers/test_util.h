// Helpers for informer tests: an event recorder that tests can block on, and spin-waits on conditions
// that the code under test makes true (no timed assertions; the test runner's timeout bounds them).
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "informers/informer.h"
#include "test/common/fake_clock.h"

namespace liken::testing {

// Records handler calls as "add:<key>", "update:<key>", "delete:<key>".
class RecordingHandler : public informers::EventHandler {
 public:
  void OnAdd(const informers::ObjectPtr& o) override { Push("add:" + informers::ObjectKey(*o)); }
  void OnUpdate(const informers::ObjectPtr&, const informers::ObjectPtr& o) override {
    Push("update:" + informers::ObjectKey(*o));
  }
  void OnDelete(const informers::ObjectPtr& o) override { Push("delete:" + informers::ObjectKey(*o)); }

  // Blocks until `event` was recorded.
  void WaitFor(const std::string& event) {
    absl::MutexLock lock(&mu_);
    struct Pred {
      RecordingHandler* h;
      std::string e;
      bool Eval() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
        for (const auto& x : h->events_) {
          if (x == e) return true;
        }
        return false;
      }
    } pred{this, event};
    mu_.Await(absl::Condition(&pred, &Pred::Eval));
  }

  // True when `event` was recorded.
  bool Has(const std::string& event) {
    absl::MutexLock lock(&mu_);
    for (const auto& x : events_) {
      if (x == event) return true;
    }
    return false;
  }

  std::vector<std::string> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  void Push(std::string e) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(e));
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
};

// Spins until `done()` holds; when a thread waits on `clock`, moves it forward by `step` (drives backoffs).
template <typename F>
void DriveUntil(FakeClock* clock, F done, absl::Duration step = absl::Minutes(1)) {
  while (!done()) {
    if (clock->waiters() > 0) clock->Advance(step);
    std::this_thread::yield();
  }
}

}  // namespace liken::testing
