// The Kubernetes API as the daemon uses it: JSON objects by resource path, with HTTP codes mapped to Status.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace liken::informers {

// Query parameters of a list or watch.
struct RequestOptions {
  std::string field_selector;
  std::string label_selector;
  std::string resource_version;
  std::string resource_version_match;
  int64_t limit = 0;               // 0: no paging
  std::string continue_token;
  int timeout_seconds = 0;         // watch: the server ends the stream after this long (0: server default)
  bool allow_watch_bookmarks = false;
};

// Renders `options` as a URL query string (without '?'; empty when nothing is set). `watch` adds watch=1.
// Thread-safe.
std::string EncodeQuery(const RequestOptions& options, bool watch);

// One event of a watch stream: type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, and its object.
struct WatchEvent {
  std::string type;
  nlohmann::json object;
};

// Parses one line of a watch stream. InvalidArgument for a line that is not a watch event. Thread-safe.
absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

// A flag that, once raised, ends watches and retry waits that were given it. Thread-safe.
class Cancellation {
 public:
  // Raises the flag and runs the subscribed callbacks (once). Thread-safe.
  void Cancel();
  // True once Cancel was called. Thread-safe.
  bool IsCancelled() const;
  // Runs `fn` on Cancel (at once when already cancelled); returns a handle for Unsubscribe. Thread-safe.
  int Subscribe(std::function<void()> fn);
  // Forgets a callback; when it returns the callback is not running. Thread-safe.
  void Unsubscribe(int handle);

 private:
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  int next_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;               // the callback Cancel is running now; 0: none
  std::thread::id canceller_ ABSL_GUARDED_BY(mu_);  // the thread running it
};

// Called for each watch event, in order; return false to end the watch (Watch then returns OK).
using WatchHandler = std::function<bool(const WatchEvent&)>;

// The API server, by resource path ("/api/v1/nodes/n1", "/apis/resource.k8s.io/v1/resourceslices").
// Errors carry the HTTP code (HttpCodeOf): 404 NotFound, 409 AlreadyExists (create of an existing name) or
// Aborted (conflict), 410 OutOfRange (Gone: resource version too old), 429 ResourceExhausted, 5xx
// Unavailable, 401 Unauthenticated, 403 PermissionDenied, 400/422 InvalidArgument; transport errors
// Unavailable; cancellation Cancelled. Implementations are thread-safe.
class KubeClient {
 public:
  virtual ~KubeClient() = default;
  // GETs one object. Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Get(const std::string& path) = 0;
  // GETs a collection (a *List object with metadata.resourceVersion and items). Thread-safe.
  virtual absl::StatusOr<nlohmann::json> List(const std::string& path, const RequestOptions& options) = 0;
  // POSTs `object` to the collection `path`; returns the object the server stored. Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Create(const std::string& path, const nlohmann::json& object) = 0;
  // PUTs `object` to the object `path` (its metadata.resourceVersion guards the write). Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Update(const std::string& path, const nlohmann::json& object) = 0;
  // DELETEs the object at `path`; with `uid` set, only if the object still has that UID. Thread-safe.
  virtual absl::Status Delete(const std::string& path, const std::string& uid = "") = 0;
  // Streams events of the collection `path` to `handler` until the server ends the stream (OK), the
  // handler returns false (OK), `cancel` is raised (Cancelled), the stream goes silent longer than the
  // client's watch idle timeout (DeadlineExceeded), or an error (ERROR events with code 410 give
  // OutOfRange). `cancel` may be null. Thread-safe.
  virtual absl::Status Watch(const std::string& path, const RequestOptions& options, const WatchHandler& handler,
                             Cancellation* cancel) = 0;
};

// Maps an HTTP status code and response body (a metav1.Status, or anything) to a Status carrying the
// code; 2xx gives OK. Thread-safe.
absl::Status StatusFromHttp(int code, std::string_view body);

// The HTTP code recorded in `status` by StatusFromHttp, or 0. Thread-safe.
int HttpCodeOf(const absl::Status& status);

// True for a 410 Gone (the resource version is too old: relist). Thread-safe.
bool IsGone(const absl::Status& status);

// True for a 409 Conflict on update (someone else wrote the object first). Thread-safe.
bool IsConflict(const absl::Status& status);

// Resource paths. Thread-safe.
std::string ResourceSlicesPath();
std::string ResourceSlicePath(const std::string& name);
std::string ResourceClaimPath(const std::string& namespace_name, const std::string& name);
std::string PodsPath();
std::string NodePath(const std::string& name);

}  // namespace liken::informers
