#include "informers/rest_client.h"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include <cpprest/http_client.h>
#include <cpprest/producerconsumerstream.h>
#include <pplx/threadpool.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/log.h"
#include "controller/rate_limiter.h"

namespace liken::informers {
namespace {

namespace http = web::http;
namespace client = web::http::client;

// Waits `d` on `clock`; returns false when `cancel` was raised first.
bool SleepFor(controller::Clock* clock, absl::Duration d, Cancellation* cancel) {
  if (d <= absl::ZeroDuration()) return cancel == nullptr || !cancel->IsCancelled();
  absl::Mutex mu;
  bool cancelled = false;
  controller::ScopedClockWaker waker(clock, &mu);
  int sub = 0;
  if (cancel != nullptr) {
    sub = cancel->Subscribe([&] {
      absl::MutexLock lock(&mu);
      cancelled = true;
    });
  }
  {
    absl::MutexLock lock(&mu);
    absl::Time deadline = clock->Now() + d;
    while (!cancelled && clock->Now() < deadline) {
      clock->AwaitWithDeadline(&mu, absl::Condition(&cancelled), deadline);
    }
  }
  if (cancel != nullptr) cancel->Unsubscribe(sub);
  absl::MutexLock lock(&mu);
  return !cancelled;
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
  RestClient(const KubeConfig& config, controller::Clock* clock)
      : config_(config),
        clock_(clock),
        bucket_(clock, config.qps, config.burst),
        user_agent_(config.user_agent.empty() ? DefaultUserAgent() : config.user_agent),
        client_(web::uri(config.server), ClientConfig(config, config.request_timeout)),
        watch_client_(web::uri(config.server), ClientConfig(config, config.watch_idle_timeout)) {}

  absl::StatusOr<nlohmann::json> Get(const std::string& path) override {
    return JsonCall(http::methods::GET, path, nullptr, /*idempotent=*/true);
  }

  absl::StatusOr<nlohmann::json> List(const std::string& path, const RequestOptions& options) override {
    std::string query = EncodeQuery(options, /*watch=*/false);
    return JsonCall(http::methods::GET, query.empty() ? path : path + "?" + query, nullptr, true);
  }

  absl::StatusOr<nlohmann::json> Create(const std::string& path, const nlohmann::json& object) override {
    return JsonCall(http::methods::POST, path, &object, false);
  }

  absl::StatusOr<nlohmann::json> Update(const std::string& path, const nlohmann::json& object) override {
    return JsonCall(http::methods::PUT, path, &object, false);
  }

  absl::Status Delete(const std::string& path, const std::string& uid) override {
    nlohmann::json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
    if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
    auto result = JsonCall(http::methods::DEL, path, &options, true);
    return result.status();
  }

  absl::Status Watch(const std::string& path, const RequestOptions& options, const WatchHandler& handler,
                     Cancellation* cancel) override {
    if (cancel != nullptr && cancel->IsCancelled()) return absl::CancelledError("watch cancelled");
    if (!SleepFor(clock_, bucket_.Reserve(), cancel)) return absl::CancelledError("watch cancelled");
    auto token = BearerToken();
    if (!token.ok()) return token.status();
    pplx::cancellation_token_source cts;
    int sub = 0;
    if (cancel != nullptr) sub = cancel->Subscribe([&cts] { cts.cancel(); });
    absl::Status result = DoWatch(path + "?" + EncodeQuery(options, /*watch=*/true), *token, handler, cts, cancel);
    if (cancel != nullptr) cancel->Unsubscribe(sub);
    return result;
  }

 private:
  static client::http_client_config ClientConfig(const KubeConfig& config, absl::Duration timeout) {
    client::http_client_config c;
    c.set_timeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
    if (config.server.rfind("https:", 0) != 0) return c;
    c.set_validate_certificates(!config.insecure_skip_tls_verify);
    std::string ca = config.ca_pem, cert = config.client_cert_pem, key = config.client_key_pem;
    c.set_ssl_context_callback([ca, cert, key](boost::asio::ssl::context& ctx) {
      boost::system::error_code ec;
      if (!ca.empty()) ctx.add_certificate_authority(boost::asio::buffer(ca.data(), ca.size()), ec);
      if (ec) LogError("kube client: CA bundle rejected", {{"error", ec.message()}});
      if (!cert.empty()) {
        ctx.use_certificate_chain(boost::asio::buffer(cert.data(), cert.size()), ec);
        if (ec) LogError("kube client: client certificate rejected", {{"error", ec.message()}});
        ctx.use_private_key(boost::asio::buffer(key.data(), key.size()), boost::asio::ssl::context::pem, ec);
        if (ec) LogError("kube client: client key rejected", {{"error", ec.message()}});
      }
    });
    return c;
  }

 private:
  // The bearer token, re-read from the token file when its modification time changed.
  absl::StatusOr<std::string> BearerToken() {
    if (config_.token_file.empty()) return config_.token;
    struct stat st {};
    if (::stat(config_.token_file.c_str(), &st) != 0) {
      absl::MutexLock lock(&token_mu_);
      if (!cached_token_.empty()) return cached_token_;
      return absl::UnavailableError("token file " + config_.token_file + " is missing");
    }
    absl::MutexLock lock(&token_mu_);
    if (st.st_mtim.tv_sec != token_mtime_.tv_sec || st.st_mtim.tv_nsec != token_mtime_.tv_nsec ||
        cached_token_.empty()) {
      auto text = ReadFileToString(config_.token_file);
      if (!text.ok()) {
        if (!cached_token_.empty()) return cached_token_;
        return text.status();
      }
      cached_token_ = std::string(absl::StripAsciiWhitespace(*text));
      token_mtime_ = st.st_mtim;
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

  // One HTTP exchange; transport failures become Unavailable.
  absl::StatusOr<Reply> Exchange(const http::method& method, const std::string& path_and_query,
                                 const nlohmann::json* body) {
    auto token = BearerToken();
    if (!token.ok()) return token.status();
    http::http_request req = NewRequest(method, path_and_query, *token);
    if (body != nullptr) req.set_body(body->dump(), "application/json");
    try {
      http::http_response resp = client_.request(req).get();
      Reply reply;
      reply.code = resp.status_code();
      reply.body = resp.extract_utf8string(true).get();
      auto ra = resp.headers().find("Retry-After");
      int seconds = 0;
      if (ra != resp.headers().end() && absl::SimpleAtoi(ra->second, &seconds) && seconds >= 0) {
        reply.has_retry_after = true;
        reply.retry_after = absl::Seconds(std::min(seconds, 60));
      }
      return reply;
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("request ", std::string(method), " ", path_and_query, ": ", e.what()));
    }
  }

  absl::StatusOr<nlohmann::json> JsonCall(const http::method& method, const std::string& path_and_query,
                                          const nlohmann::json* body, bool idempotent) {
    absl::Duration backoff = absl::Milliseconds(200);
    absl::Status last;
    for (int attempt = 0; attempt <= config_.max_retries; ++attempt) {
      SleepFor(clock_, bucket_.Reserve(), nullptr);
      auto reply = Exchange(method, path_and_query, body);
      absl::Duration wait = backoff;
      backoff = std::min(backoff * 2, absl::Seconds(10));
      if (!reply.ok()) {
        last = reply.status();
        if (!idempotent && attempt > 0) break;  // the write may have happened; let the caller decide
      } else if (reply->code >= 200 && reply->code < 300) {
        if (reply->body.empty()) return nlohmann::json::object();
        nlohmann::json j = nlohmann::json::parse(reply->body, nullptr, false);
        if (j.is_discarded()) return absl::InternalError("API server returned a body that is not JSON: " + path_and_query);
        return j;
      } else {
        last = StatusFromHttp(reply->code, reply->body);
        bool retryable = reply->code == 429 || (reply->code >= 500 && (idempotent || reply->has_retry_after));
        if (!retryable) return last;
        if (reply->has_retry_after) wait = reply->retry_after;
      }
      if (attempt == config_.max_retries) break;
      LogDebug("kube client: retrying", {{"path", path_and_query}, {"error", std::string(last.message())}});
      SleepFor(clock_, wait, nullptr);
    }
    return last;
  }

  absl::Status DoWatch(const std::string& path_and_query, const std::string& token, const WatchHandler& handler,
                       pplx::cancellation_token_source& cts, Cancellation* cancel) {
    auto cancelled = [&] { return cancel != nullptr && cancel->IsCancelled(); };
    try {
      http::http_request req = NewRequest(http::methods::GET, path_and_query, token);
      http::http_response resp = watch_client_.request(req, cts.get_token()).get();
      if (resp.status_code() != http::status_codes::OK) {
        return StatusFromHttp(resp.status_code(), resp.extract_utf8string(true).get());
      }
      auto stream = resp.body();
      auto buf = stream.streambuf();
      std::string pending;
      std::vector<uint8_t> chunk(64 * 1024);
      while (true) {
        if (cancelled()) return absl::CancelledError("watch cancelled");
        size_t want = std::clamp<size_t>(static_cast<size_t>(std::max<std::streamsize>(buf.in_avail(), 1)), 1,
                                         chunk.size());
        size_t n = buf.getn(chunk.data(), want).get();
        if (n == 0) break;  // the server ended the stream
        pending.append(reinterpret_cast<const char*>(chunk.data()), n);
        size_t start = 0;
        for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
          std::string_view line(pending.data() + start, nl - start);
          if (line.empty() || line == "\r") continue;
          auto event = ParseWatchEvent(line);
          if (!event.ok()) return event.status();
          if (event->type == "ERROR") {
            int code = event->object.value("code", 500);
            return StatusFromHttp(code, event->object.dump());
          }
          if (!handler(*event)) {
            cts.cancel();
            return absl::OkStatus();
          }
        }
        pending.erase(0, start);
      }
      return cancelled() ? absl::CancelledError("watch cancelled") : absl::OkStatus();
    } catch (const std::exception& e) {
      if (cancelled()) return absl::CancelledError("watch cancelled");
      std::string what = e.what();
      if (what.find("timed out") != std::string::npos || what.find("timeout") != std::string::npos) {
        return absl::DeadlineExceededError("watch went silent: " + what);
      }
      return absl::UnavailableError("watch " + path_and_query + ": " + what);
    }
  }

  const KubeConfig config_;
  controller::Clock* const clock_;
  controller::TokenBucket bucket_;
  const std::string user_agent_;
  client::http_client client_;
  client::http_client watch_client_;
  absl::Mutex token_mu_;
  std::string cached_token_ ABSL_GUARDED_BY(token_mu_);
  struct timespec token_mtime_ ABSL_GUARDED_BY(token_mu_) {};
};

}  // namespace

void SetHttpThreads(size_t threads) {
  try {
    crossplat::threadpool::initialize_with_threads(threads);
  } catch (const std::exception& e) {
    LogDebug("HTTP thread pool already sized", {{"error", e.what()}});
  }
}

absl::StatusOr<std::unique_ptr<KubeClient>> NewRestClient(const KubeConfig& config, controller::Clock* clock) {
  web::uri uri;
  try {
    uri = web::uri(config.server);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad API server URL '", config.server, "': ", e.what()));
  }
  if (uri.scheme() != "https" && uri.scheme() != "http") {
    return absl::InvalidArgumentError(absl::StrCat("API server URL '", config.server, "' is not http(s)"));
  }
  try {
    return std::unique_ptr<KubeClient>(std::make_unique<RestClient>(config, clock));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create API client for '", config.server, "': ", e.what()));
  }
}

}  // namespace liken::informers
