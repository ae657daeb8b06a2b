// The Kubernetes API as the daemon uses it: JSON objects by resource path, with HTTP codes mapped to Status.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

// Called for each watch event, in order; return false to end the watch (Watch then returns OK).
using WatchHandler = std::function<bool(const WatchEvent&)>;

// The API server, by resource path ("/api/v1/nodes/n1", "/apis/resource.k8s.io/v1/resourceslices").
// Errors carry the HTTP code (HttpCodeOf): 404 NotFound, 409 AlreadyExists (create of an existing name) or
// Aborted (conflict), 410 OutOfRange (Gone: resource version too old), 429 ResourceExhausted, 5xx
// Unavailable, 401 Unauthenticated, 403 PermissionDenied, 400/422 InvalidArgument; transport errors
// Unavailable; cancellation Cancelled; a response over the client's size limits ResourceExhausted with
// IsLimitExceeded. Implementations are thread-safe.
class KubeClient {
 public:
  virtual ~KubeClient() = default;
  // GETs one object. Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Get(const std::string& path) = 0;
  // GETs a collection (a *List object with metadata.resourceVersion and items). Stopping `cancel` (a default
  // token never stops) ends the request and its retry waits with Cancelled. Thread-safe.
  virtual absl::StatusOr<nlohmann::json> List(const std::string& path, const RequestOptions& options,
                                              std::stop_token cancel) = 0;
  // POSTs `object` to the collection `path`; returns the object the server stored. Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Create(const std::string& path, const nlohmann::json& object) = 0;
  // PUTs `object` to the object `path` (its metadata.resourceVersion guards the write). Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Update(const std::string& path, const nlohmann::json& object) = 0;
  // PATCHes the object `path` with `body`, sent as `content_type` ("application/apply-patch+yaml": server-side
  // apply; "application/merge-patch+json"), with the URL query `query` (without '?', e.g.
  // "fieldManager=liken.sh&force=true"); returns the object the server stored. Retried like Create and Update.
  // Clients that cannot patch return Unimplemented. Thread-safe.
  virtual absl::StatusOr<nlohmann::json> Patch(const std::string& path, const std::string& query,
                                               const std::string& content_type, const nlohmann::json& body) {
    return absl::UnimplementedError("this client does not patch");
  }
  // DELETEs the object at `path`; with `uid` set, only if the object still has that UID. Thread-safe.
  virtual absl::Status Delete(const std::string& path, const std::string& uid = "") = 0;
  // Streams events of the collection `path` to `handler` until the server ends the stream (OK), the
  // handler returns false (OK), `cancel` is stopped (Cancelled), the stream goes silent longer than the
  // client's watch idle timeout (DeadlineExceeded), or an error (ERROR events with code 410 give
  // OutOfRange). A default `cancel` never stops. Thread-safe.
  virtual absl::Status Watch(const std::string& path, const RequestOptions& options, const WatchHandler& handler,
                             std::stop_token cancel) = 0;
};

// Maps an HTTP status code and response body (a metav1.Status, or anything) to a Status carrying the
// code; 2xx gives OK. Thread-safe.
absl::Status StatusFromHttp(int code, std::string_view body);

// What a request's response means: a 2xx body as JSON (an empty body is an empty object; a body that is
// not JSON is Internal), any other code as StatusFromHttp. Thread-safe.
absl::StatusOr<nlohmann::json> ParseResponse(int code, std::string_view body);

// The HTTP code recorded in `status` by StatusFromHttp, or 0. Thread-safe.
int HttpCodeOf(const absl::Status& status);

// True for a 410 Gone (the resource version is too old: relist). Thread-safe.
bool IsGone(const absl::Status& status);

// A ResourceExhausted status marked as a size limit that was hit (not a 429 from the server). Thread-safe.
absl::Status LimitExceededError(std::string_view message);

// True for a status made by LimitExceededError. Thread-safe.
bool IsLimitExceeded(const absl::Status& status);

// The longest message StatusFromHttp keeps from a response (longer ones are cut, with the size noted).
inline constexpr size_t kMaxErrorMessageBytes = 1024;

// OK when `name` is a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.', at most 253 bytes,
// alphanumeric at both ends; so never "." or ".."): the names of nodes, claims and slices. Thread-safe.
absl::Status ValidateDnsSubdomain(std::string_view name);

// OK when `name` is a DNS-1123 label (lower-case alphanumerics and '-', at most 63 bytes): namespaces.
// Thread-safe.
absl::Status ValidateDnsLabel(std::string_view name);

// OK when `path` is an absolute API path whose segments are non-empty, neither "." nor "..", and made of
// lower-case alphanumerics, '-' and '.' (what the path builders below produce from valid names). The REST
// client refuses any other path before it sends anything. Thread-safe.
absl::Status ValidateApiPath(std::string_view path);

// True for a 409 Conflict on update (someone else wrote the object first). Thread-safe.
bool IsConflict(const absl::Status& status);

// Resource paths. Callers check the names first (ValidateDnsSubdomain, ValidateDnsLabel): a name with a
// '/' would name another path; the client itself refuses only what no valid name can produce. Thread-safe.
std::string ResourceSlicesPath();
std::string ResourceSlicePath(const std::string& name);
std::string ResourceClaimPath(const std::string& namespace_name, const std::string& name);
std::string ResourceClaimStatusPath(const std::string& namespace_name, const std::string& name);
std::string PodsPath();
std::string NodePath(const std::string& name);

}  // namespace liken::informers
