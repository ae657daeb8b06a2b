#include "informers/kube_client.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "apis/resource_slice.h"
#include "common/text.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

// Cuts `message` to kMaxErrorMessageBytes (at a UTF-8 character boundary), noting the response's size.
std::string BoundedMessage(std::string message, size_t body_size) {
  if (message.size() <= kMaxErrorMessageBytes) return message;
  size_t cut = kMaxErrorMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  message.resize(cut);
  absl::StrAppend(&message, "... (cut; the response had ", body_size, " bytes)");
  return message;
}

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// A short, printable rendering of a name for error messages.
constexpr char kLimitPayload[] = "liken.sh/limit";

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
  // Reason and message both come from the server: the whole text is cut, not only the message.
  std::string text =
      BoundedMessage(absl::StrCat("HTTP ", code, reason.empty() ? "" : " ", reason, ": ", message), body.size());
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

absl::StatusOr<nlohmann::json> ParseResponse(int code, std::string_view body) {
  if (code < 200 || code >= 300) return StatusFromHttp(code, body);
  if (body.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InternalError("API server returned a body that is not JSON");
  return j;
}

absl::Status LimitExceededError(std::string_view message) {
  absl::Status status = absl::ResourceExhaustedError(std::string(message));
  status.SetPayload(kLimitPayload, absl::Cord("1"));
  return status;
}

bool IsLimitExceeded(const absl::Status& status) { return status.GetPayload(kLimitPayload).has_value(); }

absl::Status ValidateDnsSubdomain(std::string_view name) {
  if (apis::IsDnsSubdomain(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("name ", EchoInput(name), " is not a DNS subdomain"));
}

absl::Status ValidateDnsLabel(std::string_view name) {
  if (apis::IsDnsLabel(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("name ", EchoInput(name), " is not a DNS label"));
}

absl::Status ValidateApiPath(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.size() > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("API path ", EchoInput(path), " is not absolute or too long"));
  }
  const std::string segments(path.substr(1));
  for (absl::string_view segment : absl::StrSplit(segments, '/')) {
    bool ok = !segment.empty() && segment != "." && segment != "..";
    for (char c : segment) ok = ok && (IsAlnumLower(c) || c == '-' || c == '.');
    if (!ok) return absl::InvalidArgumentError(absl::StrCat("API path ", EchoInput(path), " has an invalid segment"));
  }
  return absl::OkStatus();
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
std::string ResourceClaimStatusPath(const std::string& ns, const std::string& name) {
  return ResourceClaimPath(ns, name) + "/status";
}
std::string PodsPath() { return "/api/v1/pods"; }
std::string NodePath(const std::string& name) { return "/api/v1/nodes/" + name; }

}  // namespace liken::informers
