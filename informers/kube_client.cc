#include "informers/kube_client.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace liken::informers {
namespace {

constexpr char kHttpCodePayload[] = "liken.sh/http-code";

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

std::string EncodeQuery(const RequestOptions& o, bool watch) {
  std::vector<std::string> parts;
  if (watch) parts.push_back("watch=1");
  if (!o.field_selector.empty()) parts.push_back("fieldSelector=" + UrlEncode(o.field_selector));
  if (!o.label_selector.empty()) parts.push_back("labelSelector=" + UrlEncode(o.label_selector));
  if (!o.resource_version.empty()) parts.push_back("resourceVersion=" + UrlEncode(o.resource_version));
  if (!o.resource_version_match.empty()) {
    parts.push_back("resourceVersionMatch=" + UrlEncode(o.resource_version_match));
  }
  if (o.limit > 0) parts.push_back(absl::StrCat("limit=", o.limit));
  if (!o.continue_token.empty()) parts.push_back("continue=" + UrlEncode(o.continue_token));
  if (o.timeout_seconds > 0) parts.push_back(absl::StrCat("timeoutSeconds=", o.timeout_seconds));
  if (o.allow_watch_bookmarks) parts.push_back("allowWatchBookmarks=true");
  std::string q;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) q.push_back('&');
    q += parts[i];
  }
  return q;
}

absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("watch event is not a JSON object");
  auto type = j.find("type");
  auto object = j.find("object");
  if (type == j.end() || !type->is_string()) return absl::InvalidArgumentError("watch event has no type");
  if (object == j.end() || !object->is_object()) return absl::InvalidArgumentError("watch event has no object");
  WatchEvent event{type->get<std::string>(), std::move(*object)};
  return event;
}

void Cancellation::Cancel() {
  mu_.Lock();
  if (cancelled_) {
    mu_.Unlock();
    return;
  }
  cancelled_ = true;
  canceller_ = std::this_thread::get_id();
  // One callback at a time, outside the lock, each taken out of the map first: Unsubscribe of a callback not yet
  // run drops it, and Unsubscribe of the one running waits for it (its owner may free what it captured).
  while (!callbacks_.empty()) {
    auto callback = callbacks_.extract(callbacks_.begin());
    running_ = callback.key();
    mu_.Unlock();
    callback.mapped()();
    mu_.Lock();
  }
  running_ = 0;
  mu_.Unlock();
}

bool Cancellation::IsCancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

int Cancellation::Subscribe(std::function<void()> fn) {
  bool run_now;
  int id;
  {
    absl::MutexLock lock(&mu_);
    run_now = cancelled_;
    id = ++next_;
    if (!run_now) callbacks_[id] = fn;
  }
  if (run_now) fn();
  return id;
}

void Cancellation::Unsubscribe(int handle) {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(handle);
  if (canceller_ == std::this_thread::get_id()) return;  // from inside a callback: its own, never waited for
  auto done = [this, handle]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_ != handle; };
  mu_.Await(absl::Condition(&done));
}

absl::Status StatusFromHttp(int code, std::string_view body) {
  if (code >= 200 && code < 300) return absl::OkStatus();
  std::string message;
  std::string reason;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (auto m = j.find("message"); m != j.end() && m->is_string()) message = m->get<std::string>();
    if (auto r = j.find("reason"); r != j.end() && r->is_string()) reason = r->get<std::string>();
  }
  if (message.empty()) message = std::string(body.substr(0, 200));
  std::string text = absl::StrCat("HTTP ", code, reason.empty() ? "" : " ", reason, ": ", message);
  absl::StatusCode sc;
  switch (code) {
    case 400:
    case 422: sc = absl::StatusCode::kInvalidArgument; break;
    case 401: sc = absl::StatusCode::kUnauthenticated; break;
    case 403: sc = absl::StatusCode::kPermissionDenied; break;
    case 404: sc = absl::StatusCode::kNotFound; break;
    case 409: sc = reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists : absl::StatusCode::kAborted; break;
    case 410: sc = absl::StatusCode::kOutOfRange; break;
    case 429: sc = absl::StatusCode::kResourceExhausted; break;
    case 504: sc = absl::StatusCode::kDeadlineExceeded; break;
    default: sc = code >= 500 ? absl::StatusCode::kUnavailable : absl::StatusCode::kUnknown; break;
  }
  absl::Status status(sc, text);
  status.SetPayload(kHttpCodePayload, absl::Cord(absl::StrCat(code)));
  return status;
}

int HttpCodeOf(const absl::Status& status) {
  auto payload = status.GetPayload(kHttpCodePayload);
  int code = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &code)) return 0;
  return code;
}

bool IsGone(const absl::Status& status) {
  return HttpCodeOf(status) == 410 || status.code() == absl::StatusCode::kOutOfRange;
}

bool IsConflict(const absl::Status& status) { return status.code() == absl::StatusCode::kAborted; }

std::string ResourceSlicesPath() { return "/apis/resource.k8s.io/v1/resourceslices"; }
std::string ResourceSlicePath(const std::string& name) { return ResourceSlicesPath() + "/" + name; }
std::string ResourceClaimPath(const std::string& ns, const std::string& name) {
  return absl::StrCat("/apis/resource.k8s.io/v1/namespaces/", ns, "/resourceclaims/", name);
}
std::string PodsPath() { return "/api/v1/pods"; }
std::string NodePath(const std::string& name) { return "/api/v1/nodes/" + name; }

}  // namespace liken::informers
