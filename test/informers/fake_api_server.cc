#include "test/informers/fake_api_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace liken::testing {
namespace {

std::string UrlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string KeyOf(const nlohmann::json& obj) {
  const auto& meta = obj["metadata"];
  std::string ns = meta.value("namespace", "");
  std::string name = meta.value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

// Splits an API path into (resource, namespace, name); false when it is not one.
bool Route(const std::string& path, std::string* resource, std::string* ns, std::string* name) {
  std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  size_t i;
  if (parts.size() >= 2 && parts[0] == "api") {
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    i = 3;
  } else {
    return false;
  }
  std::vector<std::string> rest(parts.begin() + std::min(i, parts.size()), parts.end());
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    *ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 2) return false;
  *resource = rest[0];
  *name = rest.size() == 2 ? rest[1] : "";
  return true;
}

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"}, {"code", code},
                        {"reason", reason}, {"message", message}}
      .dump();
}

}  // namespace

bool MatchesFieldSelector(const nlohmann::json& object, const std::string& selector) {
  if (selector.empty()) return true;
  for (absl::string_view term : absl::StrSplit(selector, ',')) {
    std::vector<std::string> kv = absl::StrSplit(term, '=');
    if (kv.size() != 2) return false;
    const nlohmann::json* cur = &object;
    for (absl::string_view part : absl::StrSplit(kv[0], '.')) {
      std::string key(part);
      if (!cur->is_object() || !cur->contains(key)) return false;
      cur = &(*cur)[key];
    }
    if (!cur->is_string() || cur->get<std::string>() != kv[1]) return false;
  }
  return true;
}

bool HttpResponder::Write(const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
    bytes_->fetch_add(n);
  }
  return true;
}

void HttpResponder::Respond(int code, const std::string& body, const std::string& extra_headers) {
  Write(absl::StrCat("HTTP/1.1 ", code, " X\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                     "\r\nConnection: close\r\n", extra_headers, "\r\n", body));
  ::shutdown(fd_, SHUT_WR);
}

void HttpResponder::StartStream() {
  Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n");
}

bool HttpResponder::SendLine(const std::string& line) {
  std::string data = line + "\n";
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return Write(std::string(size) + data + "\r\n");
}

bool HttpResponder::SendChunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return Write(std::string(size) + data + "\r\n");
}

void HttpResponder::EndStream() {
  Write("0\r\n\r\n");
  ::shutdown(fd_, SHUT_WR);
}

void HttpResponder::Abort() { ::shutdown(fd_, SHUT_RDWR); }

FakeApiServer::FakeApiServer() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(listen_fd_, 64) != 0) {
    std::perror("fake api server: bind/listen");
    std::abort();
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeApiServer::~FakeApiServer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  absl::MutexLock lock(&mu_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);  // accepted during shutdown
  mu_.Await(absl::Condition(
      +[](int* active) { return *active == 0; }, &active_connections_));
  ::close(listen_fd_);
}

std::string FakeApiServer::url() const { return absl::StrCat("http://127.0.0.1:", port_); }

void FakeApiServer::AcceptLoop() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.push_back(fd);
    ++active_connections_;
    std::thread([this, fd] { Serve(fd); }).detach();
  }
}

void FakeApiServer::Serve(int fd) {
  std::string data;
  char buf[4096];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  if (header_end != std::string::npos) {
    HttpRequest req;
    std::vector<std::string> lines = absl::StrSplit(data.substr(0, header_end), "\r\n");
    std::vector<std::string> first = absl::StrSplit(lines[0], ' ');
    req.method = first.size() > 0 ? first[0] : "";
    std::string target = first.size() > 1 ? first[1] : "/";
    auto q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) {
      for (absl::string_view kv : absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
        std::vector<std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
        req.query[UrlDecode(p[0])] = p.size() > 1 ? UrlDecode(p[1]) : "";
      }
    }
    size_t content_length = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      auto colon = lines[i].find(':');
      if (colon == std::string::npos) continue;
      std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
      std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
      req.headers[name] = value;
      if (name == "content-length" && !absl::SimpleAtoi(value, &content_length)) content_length = 0;
    }
    req.body = data.substr(header_end + 4);
    while (req.body.size() < content_length) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      req.body.append(buf, static_cast<size_t>(n));
    }
    Interceptor interceptor;
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(req);
      interceptor = interceptor_;
    }
    HttpResponder out(fd, &bytes_);
    if (!interceptor || !interceptor(req, out)) Handle(req, out);
  }
  // Wait for the client to close (a watch stays here until then), then forget the connection.
  while (::recv(fd, buf, sizeof(buf), 0) > 0) {
  }
  absl::MutexLock lock(&mu_);
  watchers_.erase(fd);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
  --active_connections_;  // the last touch of `this`: the destructor may proceed once the lock is released
}

void FakeApiServer::Handle(const HttpRequest& req, HttpResponder& out) {
  if (req.method == "GET" && req.path == "/version") {
    absl::MutexLock lock(&mu_);
    if (version_.is_null()) {
      out.Respond(404, StatusBody(404, "NotFound", "no route /version"));
    } else {
      out.Respond(200, version_.dump());
    }
    return;
  }
  std::string resource, ns, name;
  if (!Route(req.path, &resource, &ns, &name)) {
    out.Respond(404, StatusBody(404, "NotFound", "no route " + req.path));
    return;
  }
  if (req.method != "GET") {
    HandleWrite(req, resource, ns, name, out);
    return;
  }
  std::string selector = req.query.count("fieldSelector") ? req.query.at("fieldSelector") : "";
  bool watch = req.query.count("watch") > 0 && req.query.at("watch") != "false" && req.query.at("watch") != "0";
  absl::MutexLock lock(&mu_);
  auto& objects = objects_[resource];
  if (!name.empty()) {
    auto it = objects.find(ns.empty() ? name : ns + "/" + name);
    if (it == objects.end()) {
      out.Respond(404, StatusBody(404, "NotFound", resource + " " + name + " not found"));
    } else {
      out.Respond(200, it->second.dump());
    }
    return;
  }
  if (!watch) {
    // Paging as the API server pages: `limit` objects in key order, then a continue token naming the list's
    // resourceVersion and the last key; a token from before a Compact is expired (410).
    int64_t limit = 0;
    if (req.query.count("limit")) (void)absl::SimpleAtoi(req.query.at("limit"), &limit);
    std::string after;
    int64_t list_rv = rv_;
    if (req.query.count("continue")) {
      const std::string& token = req.query.at("continue");
      const size_t slash = token.find('/');
      if (slash == std::string::npos || !absl::SimpleAtoi(token.substr(0, slash), &list_rv)) {
        out.Respond(400, StatusBody(400, "BadRequest", "invalid continue token"));
        return;
      }
      if (list_rv < compacted_) {
        out.Respond(410, StatusBody(410, "Expired", "The provided continue parameter is too old"));
        return;
      }
      after = token.substr(slash + 1);
    }
    nlohmann::json items = nlohmann::json::array();
    std::string last;
    int64_t remaining = 0;
    for (auto it = after.empty() ? objects.begin() : objects.upper_bound(after); it != objects.end(); ++it) {
      const auto& [key, obj] = *it;
      if ((!ns.empty() && obj["metadata"].value("namespace", "") != ns) || !MatchesFieldSelector(obj, selector)) {
        continue;
      }
      if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
        ++remaining;
        continue;
      }
      items.push_back(obj);
      last = key;
    }
    nlohmann::json meta = {{"resourceVersion", std::to_string(list_rv)}};
    if (remaining > 0) {
      meta["continue"] = absl::StrCat(list_rv, "/", last);
      meta["remainingItemCount"] = remaining;
    }
    out.Respond(200, nlohmann::json{{"kind", "List"}, {"metadata", meta}, {"items", items}}.dump());
    return;
  }
  int64_t from = 0;
  std::string rv = req.query.count("resourceVersion") ? req.query.at("resourceVersion") : "";
  if (!absl::SimpleAtoi(rv, &from)) from = 0;  // none or not a number: from the start
  out.StartStream();
  if (!rv.empty() && from < compacted_) {
    out.SendLine(nlohmann::json{{"type", "ERROR"},
                                {"object", nlohmann::json::parse(StatusBody(410, "Expired", "too old resource version"))}}
                     .dump());
    out.EndStream();
    return;
  }
  for (const auto& e : history_) {
    if (e.rv > from && e.resource == resource && MatchesFieldSelector(e.object, selector)) {
      out.SendLine(nlohmann::json{{"type", e.type}, {"object", e.object}}.dump());
    }
  }
  watchers_[out.fd()] = Watcher{out.fd(), resource, selector,
                                req.query.count("allowWatchBookmarks") && req.query.at("allowWatchBookmarks") == "true"};
}

void FakeApiServer::HandleWrite(const HttpRequest& req, const std::string& resource, const std::string& ns,
                                const std::string& name, HttpResponder& out) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
  absl::MutexLock lock(&mu_);
  auto& objects = objects_[resource];
  if (req.method == "POST" && name.empty()) {
    if (!body.is_object() || !body.contains("metadata") || !body["metadata"].contains("name")) {
      out.Respond(422, StatusBody(422, "Invalid", "metadata.name is required"));
      return;
    }
    if (!ns.empty()) body["metadata"]["namespace"] = ns;
    std::string key = KeyOf(body);
    if (objects.count(key) > 0) {
      out.Respond(409, StatusBody(409, "AlreadyExists", key + " already exists"));
      return;
    }
    body["metadata"]["resourceVersion"] = std::to_string(++rv_);
    body["metadata"]["uid"] = absl::StrCat("uid-", rv_);
    if (write_mutator_) write_mutator_(&body);
    objects[key] = body;
    Event e{rv_, resource, "ADDED", body};
    history_.push_back(e);
    Notify(e);
    out.Respond(201, body.dump());
    return;
  }
  std::string key = ns.empty() ? name : ns + "/" + name;
  auto it = objects.find(key);
  if (req.method == "PATCH" && !name.empty()) {
    // Server-side apply, simplified: the applied object replaces the stored one (or creates it). dryRun=All
    // answers what would be stored and stores nothing.
    auto ct = req.headers.find("content-type");
    if (ct == req.headers.end() || ct->second.rfind("application/apply-patch", 0) != 0 || !body.is_object()) {
      out.Respond(415, StatusBody(415, "UnsupportedMediaType", "only server-side apply"));
      return;
    }
    const bool dry_run = req.query.count("dryRun") > 0 && req.query.at("dryRun") == "All";
    const bool exists = it != objects.end();
    if (!ns.empty()) body["metadata"]["namespace"] = ns;
    body["metadata"]["name"] = name;
    body["metadata"]["uid"] = exists ? it->second["metadata"]["uid"] : nlohmann::json(absl::StrCat("uid-", rv_ + 1));
    body["metadata"]["resourceVersion"] = std::to_string(dry_run ? rv_ : rv_ + 1);
    if (write_mutator_) write_mutator_(&body);
    if (!dry_run) {
      ++rv_;
      objects[key] = body;
      Event e{rv_, resource, exists ? "MODIFIED" : "ADDED", body};
      history_.push_back(e);
      Notify(e);
    }
    out.Respond(exists ? 200 : 201, body.dump());
    return;
  }
  if (name.empty() || it == objects.end()) {
    out.Respond(404, StatusBody(404, "NotFound", resource + " " + key + " not found"));
    return;
  }
  if (req.method == "PUT") {
    if (!body.is_object() || body["metadata"].value("resourceVersion", "") !=
                                 it->second["metadata"].value("resourceVersion", "")) {
      out.Respond(409, StatusBody(409, "Conflict", "the object has been modified"));
      return;
    }
    body["metadata"]["uid"] = it->second["metadata"]["uid"];
    body["metadata"]["resourceVersion"] = std::to_string(++rv_);
    if (write_mutator_) write_mutator_(&body);
    it->second = body;
    Event e{rv_, resource, "MODIFIED", body};
    history_.push_back(e);
    Notify(e);
    out.Respond(200, body.dump());
    return;
  }
  if (req.method == "DELETE") {
    if (body.is_object() && body.contains("preconditions") && body["preconditions"].is_object() &&
        body["preconditions"].value("uid", "") != "" &&
        body["preconditions"].value("uid", "") != it->second["metadata"].value("uid", "")) {
      out.Respond(409, StatusBody(409, "Conflict", "uid precondition failed"));
      return;
    }
    nlohmann::json object = it->second;
    objects.erase(it);
    object["metadata"]["resourceVersion"] = std::to_string(++rv_);
    Event e{rv_, resource, "DELETED", object};
    history_.push_back(e);
    Notify(e);
    out.Respond(200, object.dump());
    return;
  }
  out.Respond(405, StatusBody(405, "MethodNotAllowed", req.method));
}

void FakeApiServer::SetVersion(nlohmann::json version) {
  absl::MutexLock lock(&mu_);
  version_ = std::move(version);
}

void FakeApiServer::SetWriteMutator(std::function<void(nlohmann::json*)> mutator) {
  absl::MutexLock lock(&mu_);
  write_mutator_ = std::move(mutator);
}

nlohmann::json FakeApiServer::Object(const std::string& resource, const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto r = objects_.find(resource);
  if (r == objects_.end()) return nullptr;
  auto it = r->second.find(key);
  return it == r->second.end() ? nlohmann::json() : it->second;
}

int FakeApiServer::CountWrites() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& r : requests_) {
    const bool dry_run = r.query.count("dryRun") > 0;
    n += r.method == "POST" || r.method == "PUT" || r.method == "DELETE" || (r.method == "PATCH" && !dry_run);
  }
  return n;
}

void FakeApiServer::Notify(const Event& event) {
  std::string line = nlohmann::json{{"type", event.type}, {"object", event.object}}.dump();
  for (auto& [fd, w] : watchers_) {
    if (w.resource != event.resource || !MatchesFieldSelector(event.object, w.field_selector)) continue;
    HttpResponder out(fd, &bytes_);
    out.SendLine(line);
  }
}

void FakeApiServer::Upsert(const std::string& resource, nlohmann::json object) {
  absl::MutexLock lock(&mu_);
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  if (!object["metadata"].contains("uid")) object["metadata"]["uid"] = absl::StrCat("uid-", rv_);
  std::string key = KeyOf(object);
  auto& objects = objects_[resource];
  bool existed = objects.count(key) > 0;
  objects[key] = object;
  Event e{rv_, resource, existed ? "MODIFIED" : "ADDED", object};
  history_.push_back(e);
  Notify(e);
}

void FakeApiServer::Delete(const std::string& resource, const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto& objects = objects_[resource];
  auto it = objects.find(key);
  if (it == objects.end()) return;
  nlohmann::json object = it->second;
  objects.erase(it);
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  Event e{rv_, resource, "DELETED", object};
  history_.push_back(e);
  Notify(e);
}

void FakeApiServer::SendBookmark() {
  absl::MutexLock lock(&mu_);
  std::string line =
      nlohmann::json{{"type", "BOOKMARK"}, {"object", {{"metadata", {{"resourceVersion", std::to_string(rv_)}}}}}}
          .dump();
  for (auto& [fd, w] : watchers_) {
    if (!w.bookmarks) continue;
    HttpResponder out(fd, &bytes_);
    out.SendLine(line);
  }
}

void FakeApiServer::Compact() {
  absl::MutexLock lock(&mu_);
  compacted_ = rv_;
  history_.clear();
}

void FakeApiServer::BreakWatches() {
  absl::MutexLock lock(&mu_);
  for (auto& [fd, w] : watchers_) ::shutdown(fd, SHUT_RDWR);
  watchers_.clear();
}

FakeApiServer::Interceptor FakeApiServer::NeverAnswer(bool watch_only) {
  return [watch_only](const HttpRequest& req, HttpResponder&) {
    return !watch_only || req.query.count("watch") > 0;  // answered by nobody
  };
}

FakeApiServer::Interceptor FakeApiServer::EndlessWatchLine(std::atomic<int64_t>* sent) {
  return [sent](const HttpRequest& req, HttpResponder& out) {
    if (req.query.count("watch") == 0) return false;
    out.StartStream();
    out.SendChunk(R"({"type":"ADDED","object":{"metadata":{"name":")");
    const std::string chunk(64 * 1024, 'x');
    while (out.SendChunk(chunk)) {
      if (sent != nullptr) sent->fetch_add(static_cast<int64_t>(chunk.size()));
    }
    return true;
  };
}

void FakeApiServer::SetInterceptor(Interceptor interceptor) {
  absl::MutexLock lock(&mu_);
  interceptor_ = std::move(interceptor);
}

std::vector<HttpRequest> FakeApiServer::Requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int FakeApiServer::CountRequests(const std::string& path, bool watch) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& r : requests_) {
    if (r.path == path && (r.query.count("watch") > 0) == watch) ++n;
  }
  return n;
}

int FakeApiServer::OpenWatches() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(watchers_.size());
}

std::string FakeApiServer::ResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return std::to_string(rv_);
}

void FakeApiServer::WaitForRequests(const std::string& path, bool watch, int n) const {
  absl::MutexLock lock(&mu_);
  struct Pred {
    const FakeApiServer* s;
    std::string path;
    bool watch;
    int n;
    bool Eval() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
      int c = 0;
      for (const auto& r : s->requests_) {
        if (r.path == path && (r.query.count("watch") > 0) == watch) ++c;
      }
      return c >= n;
    }
  } pred{this, path, watch, n};
  mu_.Await(absl::Condition(&pred, &Pred::Eval));
}

void FakeApiServer::WaitForOpenWatches(int n) const {
  absl::MutexLock lock(&mu_);
  struct Pred {
    const FakeApiServer* s;
    int n;
    bool Eval() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return static_cast<int>(s->watchers_.size()) == n; }
  } pred{this, n};
  mu_.Await(absl::Condition(&pred, &Pred::Eval));
}

}  // namespace liken::testing
