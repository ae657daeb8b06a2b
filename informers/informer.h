// List then watch one collection into a Store; handlers only enqueue.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <stop_token>
#include <thread>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "informers/kube_client.h"
#include "informers/store.h"

namespace liken::informers {

// Receives cache changes. Called on the informer's thread after the store changed; implementations
// should only enqueue work. Must be thread-safe.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void OnAdd(const ObjectPtr& object) = 0;
  virtual void OnUpdate(const ObjectPtr& old_object, const ObjectPtr& new_object) = 0;
  virtual void OnDelete(const ObjectPtr& object) = 0;
};

// Receives informer restarts (for metrics). Must be thread-safe.
class InformerObserver {
 public:
  virtual ~InformerObserver() = default;
  // A watch of `resource` ended abnormally and is being re-established; `reason` is "gone", "error",
  // or "timeout".
  virtual void OnWatchRestart(const std::string& resource, const std::string& reason) = 0;
  // A watch of `resource` delivered one event of `type` (ADDED, MODIFIED, DELETED, BOOKMARK).
  virtual void OnWatchEvent(const std::string& resource, const std::string& type) {}
  // The claim cache lacked a claim (or held a stale copy) and read it from the API server.
  virtual void OnClaimGetFallback() {}
};

// What to list and watch.
struct InformerOptions {
  std::string resource;         // name for logs and metrics ("resourceslices", "pods")
  std::string path;             // collection path
  std::string field_selector;   // e.g. "spec.nodeName=node-a"
  std::string label_selector;
  int watch_timeout_seconds = 300;  // asked of the server; jittered up to 2x, as client-go does
  // The most objects one list response holds (`limit`); the rest come in further pages (`continue`), so a node
  // with many pods or slices never needs one huge response. 0: one response.
  int64_t list_page_size = 500;
  absl::Duration backoff_initial = absl::Milliseconds(500);
  absl::Duration backoff_max = absl::Seconds(30);
  // Applied to every object before it is stored (client-go's transform): drop what nobody reads, so
  // memory grows with what the node needs, not with object size. Must keep metadata. May be empty.
  std::function<void(nlohmann::json*)> transform;
  // How the store keeps the objects (store.h): kCbor for a few large objects read now and then.
  StoreEncoding store_encoding = StoreEncoding::kTree;
};

// Keeps a Store in step with the API server: list (in pages of list_page_size; a continue token that expired
// mid-list, 410 Gone, restarts the list), then watch from the list's resourceVersion with
// bookmarks; relist on 410 Gone and on a watch event over the client's size limit (after a backoff); on
// any other error or a silent stream, reconnect after a jittered exponential backoff. Stop ends a list or
// watch in flight and any backoff at once. Thread-safe.
class Informer {
 public:
  // `client`, `clock`, `handler` (may be null) and `observer` (may be null) must outlive the informer.
  Informer(KubeClient* client, Clock* clock, InformerOptions options, EventHandler* handler,
           InformerObserver* observer = nullptr);
  ~Informer();  // stops
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // The cache. Thread-safe; lives as long as the informer.
  Store* store() { return &store_; }
  const Store* store() const { return &store_; }

  // Starts the list/watch thread; does nothing after Stop or a first Start. Thread-safe.
  void Start();

  // Ends the list or watch in progress (its request is cancelled, not waited out) and any backoff, and
  // joins the thread. Idempotent. Thread-safe.
  void Stop();

  // True once the first list has filled the store. Thread-safe.
  bool HasSynced() const;

  // Blocks until HasSynced or Stop; returns HasSynced. Thread-safe.
  bool WaitForSync();

  // Number of (re)lists performed so far. Thread-safe.
  int lists() const { return lists_.load(); }

 private:
  void Run(std::stop_token stop);
  absl::Status ListOnce(std::stop_token stop);
  // One watch from resource_version_; `got_event` tells whether it delivered any event.
  absl::Status WatchOnce(std::stop_token stop, bool* got_event);
  bool Backoff();  // false when stopped
  void Apply(const WatchEvent& event);

  KubeClient* const client_;
  Clock* const clock_;
  const InformerOptions options_;
  EventHandler* const handler_;
  InformerObserver* const observer_;
  Store store_;
  // Its stop token ends the list or watch in flight. Written by Start under mu_ before stopped_; stopped and
  // joined by Stop under join_mu_ after.
  std::jthread thread_;
  absl::Mutex join_mu_;
  std::atomic<int> lists_{0};
  std::string resource_version_;  // informer thread only
  absl::Duration backoff_;        // informer thread only
  absl::BitGen rng_;              // informer thread only
  mutable absl::Mutex mu_;
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<ScopedClockWaker> waker_;
};

}  // namespace liken::informers
