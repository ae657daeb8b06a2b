// A tiny HTTP/1.1 API server on loopback for informer tests: /version, list, get, create, update (resourceVersion
// checked), server-side apply (simplified, with dryRun), delete, chunked watch streams with history replay, bookmarks, 410 after compaction, broken
// streams, and a byte counter. Plain sockets.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"

namespace liken::testing {

// One parsed request.
struct HttpRequest {
  std::string method;
  std::string path;                           // without the query
  std::map<std::string, std::string> query;   // decoded
  std::map<std::string, std::string> headers; // lower-case names
  std::string body;
};

// Writes a response on one connection (for interceptors).
class HttpResponder {
 public:
  explicit HttpResponder(int fd, std::atomic<int64_t>* bytes) : fd_(fd), bytes_(bytes) {}
  // A whole response with Content-Length, then the connection closes.
  void Respond(int code, const std::string& body, const std::string& extra_headers = "");
  // Starts a chunked 200 response.
  void StartStream();
  // One chunk (a watch event line: pass the JSON, a newline is appended).
  bool SendLine(const std::string& line);
  // One chunk of raw bytes (no newline added). False once the client is gone.
  bool SendChunk(const std::string& data);
  // Ends the chunked stream properly.
  void EndStream();
  // Closes the connection at once, mid-stream.
  void Abort();
  int fd() const { return fd_; }

 private:
  bool Write(const std::string& data);
  int fd_;
  std::atomic<int64_t>* bytes_;
};

// The server. Thread-safe.
class FakeApiServer {
 public:
  // Return true when the interceptor answered the request itself.
  using Interceptor = std::function<bool(const HttpRequest&, HttpResponder&)>;

  FakeApiServer();
  ~FakeApiServer();

  // "http://127.0.0.1:<port>".
  std::string url() const;

  // Stores an object of `resource` ("pods", "resourceclaims", ...) and notifies matching watchers
  // synchronously (when Upsert returns, the bytes are sent). Sets metadata.resourceVersion.
  void Upsert(const std::string& resource, nlohmann::json object);
  // Deletes an object ("ns/name" or "name") and notifies watchers.
  void Delete(const std::string& resource, const std::string& key);
  // Sends a BOOKMARK with the current resourceVersion to watchers that allowed bookmarks.
  void SendBookmark();
  // Forgets history: watches from an older resourceVersion get a 410 ERROR event.
  void Compact();
  // Closes every open watch mid-stream.
  void BreakWatches();
  // Runs before the built-in handling of each request.
  void SetInterceptor(Interceptor interceptor);

  // Interceptors for servers that misbehave. NeverAnswer: every request is read and never answered (the
  // connection stays open until the client or the server's destructor closes it); `watch_only` limits it
  // to watches. EndlessWatchLine: a watch gets a 200 and then 'x' bytes without a newline, without end,
  // until the client goes away; the bytes sent are added to `*sent` (may be null).
  static Interceptor NeverAnswer(bool watch_only = false);
  static Interceptor EndlessWatchLine(std::atomic<int64_t>* sent = nullptr);

  // What GET /version answers (by default {"major": "1", "minor": "37", "gitVersion": "v1.37.2"}); null: 404.
  void SetVersion(nlohmann::json version);
  // Runs on each object stored by a client's POST, PUT or PATCH (server-side defaulting or dropped fields); also on
  // a PATCH with dryRun=All, whose answer is what would be stored.
  void SetWriteMutator(std::function<void(nlohmann::json*)> mutator);
  // The stored object, or null.
  nlohmann::json Object(const std::string& resource, const std::string& key) const;
  // POST, PUT, DELETE and PATCH (not dryRun) requests received.
  int CountWrites() const;

  std::vector<HttpRequest> Requests() const;
  // Requests with this method and path, whether a watch or not.
  int CountRequests(const std::string& path, bool watch) const;
  // Total bytes written to clients.
  int64_t BytesSent() const { return bytes_.load(); }
  int OpenWatches() const;
  std::string ResourceVersion() const;

  // Blocks until at least `n` requests for (path, watch) were received. No timeout (the test runner's).
  void WaitForRequests(const std::string& path, bool watch, int n) const;
  // Blocks until exactly `n` watches are open.
  void WaitForOpenWatches(int n) const;

 private:
  struct Watcher {
    int fd;
    std::string resource;
    std::string field_selector;
    bool bookmarks;
  };
  struct Event {
    int64_t rv;
    std::string resource;
    std::string type;
    nlohmann::json object;
  };

  void AcceptLoop();
  void Serve(int fd);
  void Handle(const HttpRequest& req, HttpResponder& out);
  void Notify(const Event& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleWrite(const HttpRequest& req, const std::string& resource, const std::string& ns,
                   const std::string& name, HttpResponder& out);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int64_t> bytes_{0};
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int active_connections_ ABSL_GUARDED_BY(mu_) = 0;  // detached threads; the destructor waits for 0
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<HttpRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_ ABSL_GUARDED_BY(mu_);
  std::vector<Event> history_ ABSL_GUARDED_BY(mu_);
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 1000;
  int64_t compacted_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, Watcher> watchers_ ABSL_GUARDED_BY(mu_);
  Interceptor interceptor_ ABSL_GUARDED_BY(mu_);
  std::function<void(nlohmann::json*)> write_mutator_ ABSL_GUARDED_BY(mu_);
  nlohmann::json version_ ABSL_GUARDED_BY(mu_) = {{"major", "1"}, {"minor", "37"}, {"gitVersion", "v1.37.2"}};
};

// True when `object` matches a field selector like "spec.nodeName=n1,metadata.namespace=x".
bool MatchesFieldSelector(const nlohmann::json& object, const std::string& selector);

}  // namespace liken::testing
