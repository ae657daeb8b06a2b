#include "informers/rest_client.h"

#include <arpa/inet.h>

#include <algorithm>
#include <functional>
#include <stop_token>
#include <system_error>
#include <utility>
#include <vector>

#include <cpprest/http_client.h>
#include <cpprest/producerconsumerstream.h>
#include <openssl/ssl.h>
#include <pplx/threadpool.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/log.h"
#include "common/rate_limiter.h"
#include "informers/line_splitter.h"
#include "informers/credential_files.h"

namespace liken::informers {
namespace {

namespace http = web::http;
namespace client = web::http::client;

// One call's cancellation: the client's stop and the caller's (either may be a token that never stops)
// joined into one pplx token source, which ends the HTTP exchange in flight, and one flag, which ends
// waits. Thread-safe.
class CallScope {
 public:
  CallScope(std::stop_token client_stop, std::stop_token caller)
      : client_stop_(std::move(client_stop), [this] { Raise(); }), caller_(std::move(caller), [this] { Raise(); }) {}

  // True once either flag was raised. Thread-safe.
  bool cancelled() const {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  // The token for cpprestsdk requests. Thread-safe.
  pplx::cancellation_token token() const { return cts_.get_token(); }

  // Ends the exchange in flight without marking the call cancelled (a limit was hit). Thread-safe.
  void AbortExchange() { cts_.cancel(); }

  // Waits `d` on `clock`; false when cancelled first (or already). Thread-safe.
  bool Sleep(Clock* clock, absl::Duration d) {
    if (d <= absl::ZeroDuration()) return !cancelled();
    ScopedClockWaker waker(clock, &mu_);
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = clock->Now() + d;
    while (!cancelled_ && clock->Now() < deadline) {
      clock->AwaitWithDeadline(&mu_, absl::Condition(&cancelled_), deadline);
    }
    return !cancelled_;
  }

 private:
  void Raise() {
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
    }
    cts_.cancel();
  }

  // Declared before the subscriptions, which may fire while being constructed.
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  pplx::cancellation_token_source cts_;
  // Each runs Raise once its token is stopped (at once when it already is); the destructor waits for a run in
  // progress on another thread.
  std::stop_callback<std::function<void()>> client_stop_;
  std::stop_callback<std::function<void()>> caller_;
};

absl::Status CancelledCall(const std::string& what) { return absl::CancelledError(what + " cancelled"); }

// Reads a response body as it arrives, up to `limit` bytes; more ends the exchange with LimitExceeded.
absl::StatusOr<std::string> ReadBody(http::http_response& resp, size_t limit, CallScope& scope) {
  const auto declared = resp.headers().content_length();
  if (declared > limit) {
    scope.AbortExchange();
    return LimitExceededError(absl::StrCat("response body of ", declared, " bytes exceeds the limit of ", limit));
  }
  auto buf = resp.body().streambuf();
  std::string body;
  std::vector<uint8_t> chunk(64 * 1024);
  while (true) {
    size_t want = std::clamp<size_t>(static_cast<size_t>(std::max<std::streamsize>(buf.in_avail(), 1)), 1,
                                     chunk.size());
    size_t n = buf.getn(chunk.data(), want).get();
    if (n == 0) return body;
    if (body.size() + n > limit) {
      scope.AbortExchange();
      return LimitExceededError(absl::StrCat("response body exceeds the limit of ", limit, " bytes"));
    }
    body.append(reinterpret_cast<const char*>(chunk.data()), n);
  }
}

// OK for a host name (letters, digits, '-', '.'), an IPv4 address, or a bracketed IPv6 address.
absl::Status ValidateHost(const std::string& host) {
  if (host.empty()) return absl::InvalidArgumentError("no host");
  if (host.front() == '[' || host.find(':') != std::string::npos) {
    in6_addr addr{};
    if (host.size() < 2 || host.front() != '[' || host.back() != ']' ||
        ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &addr) != 1) {
      return absl::InvalidArgumentError("'" + host + "' is not a bracketed IPv6 address");
    }
    return absl::OkStatus();
  }
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
      return absl::InvalidArgumentError("'" + host + "' is not a host name");
    }
  }
  return absl::OkStatus();
}

// A response reduced to what callers need.
struct Reply {
  int code = 0;
  std::string body;
  absl::Duration retry_after = absl::ZeroDuration();
  bool has_retry_after = false;
};

class RestClient final : public KubeClient {
 public:
  // `credentials` is null for a plain http server. Throws what cpprestsdk throws for a URL it cannot use.
  RestClient(const KubeConfig& config, std::unique_ptr<CredentialFiles> credentials, Clock* clock,
             std::stop_token stop)
      : config_(config),
        clock_(clock),
        stop_(std::move(stop)),
        bucket_(clock, config.qps, config.burst),
        user_agent_(config.user_agent.empty() ? DefaultUserAgent() : config.user_agent),
        credentials_(std::move(credentials)),
        clients_(NewClients(credentials_ != nullptr ? credentials_->Current()->generation : 0)) {}

  absl::StatusOr<nlohmann::json> Get(const std::string& path) override {
    return JsonCall(http::methods::GET, path, "", nullptr, /*idempotent=*/true, {});
  }

  absl::StatusOr<nlohmann::json> List(const std::string& path, const RequestOptions& options,
                                      std::stop_token cancel) override {
    return JsonCall(http::methods::GET, path, EncodeQuery(options, /*watch=*/false), nullptr, true, cancel);
  }

  absl::StatusOr<nlohmann::json> Create(const std::string& path, const nlohmann::json& object) override {
    return JsonCall(http::methods::POST, path, "", &object, false, {});
  }

  absl::StatusOr<nlohmann::json> Update(const std::string& path, const nlohmann::json& object) override {
    return JsonCall(http::methods::PUT, path, "", &object, false, {});
  }

  absl::StatusOr<nlohmann::json> Patch(const std::string& path, const std::string& query,
                                       const std::string& content_type, const nlohmann::json& body) override {
    return JsonCall(http::methods::PATCH, path, query, &body, false, {}, content_type);
  }

  absl::Status Delete(const std::string& path, const std::string& uid) override {
    nlohmann::json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
    if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
    auto result = JsonCall(http::methods::DEL, path, "", &options, true, {});
    return result.status();
  }

  absl::Status Watch(const std::string& path, const RequestOptions& options, const WatchHandler& handler,
                     std::stop_token cancel) override {
    if (absl::Status s = ValidateApiPath(path); !s.ok()) return s;
    CallScope scope(stop_, cancel);
    if (!scope.Sleep(clock_, bucket_.Reserve())) return CancelledCall("watch");
    auto token = BearerToken();
    if (!token.ok()) return token.status();
    return DoWatch(CurrentClients().watch, path + "?" + EncodeQuery(options, /*watch=*/true), *token, handler, scope);
  }

 private:
  // The two HTTP clients (short requests; watches) made for one generation of the TLS material.
  struct Clients {
    uint64_t generation = 0;
    std::shared_ptr<client::http_client> request;
    std::shared_ptr<client::http_client> watch;
  };

  Clients NewClients(uint64_t generation) const {
    return Clients{
        generation,
        std::make_shared<client::http_client>(web::uri(config_.server), ClientConfig(config_.request_timeout)),
        std::make_shared<client::http_client>(web::uri(config_.server), ClientConfig(config_.watch_idle_timeout))};
  }

  // The clients for the next exchange. First checks the credential files (one stat() each; read and parsed
  // again only when changed). When the CA or client certificate changed, both clients are replaced, so the
  // next exchange opens a new connection with the new material instead of reusing a kept-alive one: a rotated
  // client certificate is presented (the API server checks the connection's certificate, and its expiry, on
  // every request) and a CA removed from the bundle stops being trusted at once. Exchanges in flight, and
  // watches, finish on the old client's connection; the old client and its pooled connections go when the last
  // of them ends. Rotations are rare, so the cost is one TLS handshake per rotation.
  Clients CurrentClients() ABSL_LOCKS_EXCLUDED(clients_mu_) {
    const uint64_t generation = credentials_ != nullptr ? credentials_->Refresh()->generation : 0;
    Clients replaced;  // destroyed (when no exchange holds it any more) after the lock is released
    absl::MutexLock lock(&clients_mu_);
    if (clients_.generation < generation) {
      try {
        Clients next = NewClients(generation);
        replaced = std::exchange(clients_, std::move(next));
        LogInfo("kube client: new TLS material, new connections from now on",
                {{"generation", absl::StrCat(generation)}});
      } catch (const std::exception& e) {
        clients_.generation = generation;  // the old clients go on (their new connections use the new material)
        LogError("kube client: cannot make a new HTTP client, keeping the old one", {{"error", e.what()}});
      }
    }
    return clients_;
  }

  client::http_client_config ClientConfig(absl::Duration timeout) const {
    client::http_client_config c;
    c.set_timeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
    if (credentials_ == nullptr) return c;
    c.set_validate_certificates(!config_.insecure_skip_tls_verify);
    // cpprestsdk calls this for each new connection's TLS context. It takes the material in force now (parsed
    // when its file changed, never here). A CA given: trust exactly it (the shared store replaces the system
    // bundle the client loaded). A connection kept alive keeps what it was opened with.
    std::shared_ptr<const CredentialFiles> credentials = credentials_;
    c.set_ssl_context_callback([credentials](boost::asio::ssl::context& ctx) {
      std::shared_ptr<const TlsMaterial> material = credentials->Current();
      if (material->trust != nullptr) material->trust->ApplyTo(ctx.native_handle());
      if (material->identity != nullptr) {
        if (absl::Status s = material->identity->ApplyTo(ctx.native_handle()); !s.ok()) {
          LogError("kube client: client certificate rejected", {{"error", s.ToString()}});
        }
      }
    });
    return c;
  }

 private:
  // The bearer token, re-read from the token file when its identity (device, inode, size, modification time,
  // through symlinks) changed; a moment without the file keeps the last token.
  absl::StatusOr<std::string> BearerToken() ABSL_LOCKS_EXCLUDED(token_mu_) {
    if (config_.token_file.empty()) return config_.token;
    const FileIdentity now = FileIdentity::Of(config_.token_file);
    absl::MutexLock lock(&token_mu_);
    if (now.error != 0) {
      if (!cached_token_.empty()) return cached_token_;
      return absl::UnavailableError("token file " + config_.token_file + " is missing");
    }
    if (!(now == token_seen_) || cached_token_.empty()) {
      auto text = ReadFileToString(config_.token_file);
      if (!text.ok()) {
        if (!cached_token_.empty()) return cached_token_;
        return text.status();
      }
      cached_token_ = std::string(absl::StripAsciiWhitespace(*text));
      token_seen_ = now;
    }
    return cached_token_;
  }

  http::http_request NewRequest(const http::method& method, const std::string& path_and_query,
                                const std::string& token) const {
    http::http_request req(method);
    req.set_request_uri(web::uri(path_and_query));
    req.headers().add("User-Agent", user_agent_);
    req.headers().add("Accept", "application/json");
    if (!token.empty()) req.headers().add("Authorization", "Bearer " + token);
    return req;
  }

  // One HTTP exchange; transport failures become Unavailable, a raised flag Cancelled.
  absl::StatusOr<Reply> Exchange(const http::method& method, const std::string& path_and_query,
                                 const std::string* payload, const std::string& content_type, CallScope& scope) {
    auto token = BearerToken();
    if (!token.ok()) return token.status();
    http::http_request req = NewRequest(method, path_and_query, *token);
    if (payload != nullptr) req.set_body(*payload, content_type);
    try {
      http::http_response resp = CurrentClients().request->request(req, scope.token()).get();
      Reply reply;
      reply.code = resp.status_code();
      auto ra = resp.headers().find("Retry-After");
      int seconds = 0;
      if (ra != resp.headers().end() && absl::SimpleAtoi(ra->second, &seconds) && seconds >= 0) {
        reply.has_retry_after = true;
        reply.retry_after = absl::Seconds(std::min(seconds, 60));
      }
      auto body = ReadBody(resp, config_.max_response_bytes, scope);
      if (!body.ok()) return body.status();
      reply.body = *std::move(body);
      return reply;
    } catch (const std::exception& e) {
      if (scope.cancelled()) return CancelledCall(absl::StrCat("request ", std::string(method), " ", path_and_query));
      return absl::UnavailableError(absl::StrCat("request ", std::string(method), " ", path_and_query, ": ", e.what()));
    }
  }

  absl::StatusOr<nlohmann::json> JsonCall(const http::method& method, const std::string& path,
                                          const std::string& query, const nlohmann::json* body, bool idempotent,
                                          std::stop_token cancel,
                                          const std::string& content_type = "application/json") {
    if (absl::Status s = ValidateApiPath(path); !s.ok()) return s;
    const std::string path_and_query = query.empty() ? path : path + "?" + query;
    std::string payload;
    if (body != nullptr) {
      payload = body->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (payload.size() > config_.max_request_bytes) {
        return LimitExceededError(absl::StrCat("request body of ", payload.size(), " bytes for ", path,
                                               " exceeds the limit of ", config_.max_request_bytes));
      }
    }
    CallScope scope(stop_, cancel);
    absl::Duration backoff = absl::Milliseconds(200);
    absl::Status last;
    for (int attempt = 0; attempt <= config_.max_retries; ++attempt) {
      if (!scope.Sleep(clock_, bucket_.Reserve())) return CancelledCall(path);
      auto reply = Exchange(method, path_and_query, body != nullptr ? &payload : nullptr, content_type, scope);
      absl::Duration wait = backoff;
      backoff = std::min(backoff * 2, absl::Seconds(10));
      if (!reply.ok()) {
        last = reply.status();
        if (last.code() == absl::StatusCode::kCancelled || IsLimitExceeded(last)) return last;
        if (!idempotent && attempt > 0) break;  // the write may have happened; let the caller decide
      } else if (reply->code >= 200 && reply->code < 300) {
        auto parsed = ParseResponse(reply->code, reply->body);
        if (!parsed.ok()) {
          return absl::Status(parsed.status().code(), absl::StrCat(parsed.status().message(), ": ", path));
        }
        return parsed;
      } else {
        last = StatusFromHttp(reply->code, reply->body);
        bool retryable = reply->code == 429 || (reply->code >= 500 && (idempotent || reply->has_retry_after));
        if (!retryable) return last;
        if (reply->has_retry_after) wait = reply->retry_after;
      }
      if (attempt == config_.max_retries) break;
      LogDebug("kube client: retrying", {{"path", path_and_query}, {"error", std::string(last.message())}});
      if (!scope.Sleep(clock_, wait)) return CancelledCall(path);
    }
    return last;
  }

  // Runs one watch on `watch_client`, which the call keeps alive until the watch ends.
  absl::Status DoWatch(std::shared_ptr<client::http_client> watch_client, const std::string& path_and_query,
                       const std::string& token, const WatchHandler& handler, CallScope& scope) {
    try {
      http::http_request req = NewRequest(http::methods::GET, path_and_query, token);
      http::http_response resp = watch_client->request(req, scope.token()).get();
      if (resp.status_code() != http::status_codes::OK) {
        auto body = ReadBody(resp, kMaxErrorMessageBytes * 64, scope);
        return StatusFromHttp(resp.status_code(), body.ok() ? *body : "");
      }
      auto buf = resp.body().streambuf();
      LineSplitter lines(config_.max_watch_event_bytes);
      bool handler_done = false;
      absl::Status stream_error;
      std::vector<uint8_t> chunk(64 * 1024);
      while (true) {
        if (scope.cancelled()) return CancelledCall("watch");
        size_t want = std::clamp<size_t>(static_cast<size_t>(std::max<std::streamsize>(buf.in_avail(), 1)), 1,
                                         chunk.size());
        size_t n = buf.getn(chunk.data(), want).get();
        if (n == 0) break;  // the server ended the stream
        const std::string_view bytes(reinterpret_cast<const char*>(chunk.data()), n);
        absl::Status s = lines.Feed(bytes, [&](std::string_view line) -> absl::Status {
          auto event = ParseWatchEvent(line);
          if (!event.ok()) return event.status();
          if (event->type == "ERROR") {
            auto code = event->object.find("code");
            const bool plausible = code != event->object.end() && code->is_number_integer() &&
                                   code->get<int64_t>() >= 300 && code->get<int64_t>() < 600;
            return StatusFromHttp(plausible ? static_cast<int>(code->get<int64_t>()) : 500,
                                  event->object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
          }
          if (!handler(*event)) {
            handler_done = true;
            return absl::CancelledError("");  // stops the feed; not returned
          }
          return absl::OkStatus();
        });
        if (handler_done) {
          scope.AbortExchange();
          return absl::OkStatus();
        }
        if (!s.ok()) {
          scope.AbortExchange();
          return s;
        }
      }
      return scope.cancelled() ? CancelledCall("watch") : absl::OkStatus();
    } catch (const http::http_exception& e) {
      if (scope.cancelled()) return CancelledCall("watch");
      // The client's own idle timer ends an exchange with ETIMEDOUT; no other failure carries that code.
      if (e.error_code() == std::errc::timed_out) {
        return absl::DeadlineExceededError(absl::StrCat("watch went silent: ", e.what()));
      }
      return absl::UnavailableError(absl::StrCat("watch ", path_and_query, ": ", e.what()));
    } catch (const std::exception& e) {
      if (scope.cancelled()) return CancelledCall("watch");
      return absl::UnavailableError(absl::StrCat("watch ", path_and_query, ": ", e.what()));
    }
  }

  const KubeConfig config_;
  Clock* const clock_;
  const std::stop_token stop_;  // may never stop
  TokenBucket bucket_;
  const std::string user_agent_;
  const std::shared_ptr<CredentialFiles> credentials_;  // null for http; before the clients, which hold it
  absl::Mutex clients_mu_;
  Clients clients_ ABSL_GUARDED_BY(clients_mu_);
  absl::Mutex token_mu_;
  std::string cached_token_ ABSL_GUARDED_BY(token_mu_);
  FileIdentity token_seen_ ABSL_GUARDED_BY(token_mu_);
};

}  // namespace

void SetHttpThreads(size_t threads) {
  try {
    crossplat::threadpool::initialize_with_threads(threads);
  } catch (const std::exception& e) {
    LogDebug("HTTP thread pool already sized", {{"error", e.what()}});
  }
}

absl::Status ValidateKubeConfig(const KubeConfig& config) {
  web::uri uri;
  try {
    uri = web::uri(config.server);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad API server URL '", config.server, "': ", e.what()));
  }
  if (uri.scheme() != "https" && uri.scheme() != "http") {
    return absl::InvalidArgumentError(absl::StrCat("API server URL '", config.server, "' is not http(s)"));
  }
  if (absl::Status s = ValidateHost(uri.host()); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("API server URL '", config.server, "': ", s.message()));
  }
  if (uri.port() < 0 || uri.port() > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("API server URL '", config.server, "' has no valid port"));
  }
  if (!uri.query().empty() || !uri.fragment().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("API server URL '", config.server, "' has a query or fragment"));
  }
  if (uri.scheme() != "https") return absl::OkStatus();
  // The TLS material as the client will load it: what OpenSSL rejects here can never work.
  boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
  boost::system::error_code ec;
  if (!config.ca_pem.empty()) {
    ctx.add_certificate_authority(boost::asio::buffer(config.ca_pem.data(), config.ca_pem.size()), ec);
    if (ec) {
      return absl::InvalidArgumentError("the certificate authority data is not PEM certificates: " + ec.message());
    }
  }
  if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(config.client_cert_pem.data(), config.client_cert_pem.size()), ec);
    if (ec) return absl::InvalidArgumentError("the client certificate is not a PEM certificate: " + ec.message());
    ctx.use_private_key(boost::asio::buffer(config.client_key_pem.data(), config.client_key_pem.size()),
                        boost::asio::ssl::context::pem, ec);
    if (ec) return absl::InvalidArgumentError("the client key is not a PEM private key: " + ec.message());
    if (::SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
      return absl::InvalidArgumentError("the client key does not belong to the client certificate");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KubeClient>> NewRestClient(const KubeConfig& config, Clock* clock,
                                                          std::stop_token stop) {
  if (absl::Status s = ValidateKubeConfig(config); !s.ok()) return s;
  std::unique_ptr<CredentialFiles> credentials;
  if (config.server.rfind("https:", 0) == 0) {
    auto created = CredentialFiles::Create(config);
    if (!created.ok()) return created.status();
    credentials = *std::move(created);
  }
  try {
    return std::unique_ptr<KubeClient>(std::make_unique<RestClient>(config, std::move(credentials), clock, stop));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create API client for '", config.server, "': ", e.what()));
  }
}

}  // namespace liken::informers
