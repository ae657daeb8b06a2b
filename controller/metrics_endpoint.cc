#include "controller/metrics_endpoint.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {

MetricsEndpoint::MetricsEndpoint(std::string address, Binder bind, Clock* clock, Backoff backoff,
                                 AttemptListener on_attempt)
    : address_(std::move(address)),
      bind_(std::move(bind)),
      clock_(clock),
      backoff_(backoff),
      on_attempt_(std::move(on_attempt)),
      delay_(backoff.initial),
      waker_(std::make_unique<ScopedClockWaker>(clock, &mu_)) {}

MetricsEndpoint::~MetricsEndpoint() {
  Stop();
  waker_.reset();
}

bool MetricsEndpoint::Start() {
  if (Attempt()) return true;
  thread_ = std::jthread([this](std::stop_token stop) { Retry(std::move(stop)); });
  return false;
}

void MetricsEndpoint::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
  std::unique_ptr<MetricsServer> server;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    ready_ = false;
    server = std::move(server_);
  }
  server.reset();  // waits for its connections, without the lock
}

bool MetricsEndpoint::ready() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

int MetricsEndpoint::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

bool MetricsEndpoint::Attempt() {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server = bind_();
  int attempt = 0;
  absl::Time next;
  {
    absl::MutexLock lock(&mu_);
    attempt = failures_ + 1;
    if (server.ok()) {
      if (stopped_) return true;  // Stop ran meanwhile: the server closes on return
      server_ = *std::move(server);
      ready_ = true;
      if (failures_ > 0) LogInfo("metrics endpoint ready", {{"address", address_}, {"attempt", absl::StrCat(attempt)}});
    } else {
      failures_ = attempt;
      next = next_attempt_ = clock_->Now() + delay_;
      const std::string error(server.status().message());
      const std::string retry_in = absl::FormatDuration(delay_);
      // The first failure is an error (the endpoint is not ready; the kubelet plugin serves regardless); the
      // retries are quieter.
      Log(attempt == 1 ? LogLevel::kError : LogLevel::kDebug,
          attempt == 1 ? "metrics endpoint not ready; the kubelet plugin serves without it, retrying"
                       : "metrics endpoint still not ready",
          {{"address", address_}, {"error", error}, {"attempt", absl::StrCat(attempt)}, {"retry_in", retry_in}});
      delay_ = std::min(delay_ * 2, backoff_.max);
    }
  }
  if (on_attempt_) on_attempt_(attempt, server.status(), next);
  return server.ok();
}

void MetricsEndpoint::Retry(std::stop_token stop) {
  // A stop request wakes the wait below: it re-checks stopped_ when the callback releases mu_.
  std::stop_callback wake(stop, [this] {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  });
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      while (!stopped_ && clock_->Now() < next_attempt_) {
        clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopped_), next_attempt_);
      }
      if (stopped_) return;
    }
    if (Attempt()) return;
  }
}

}  // namespace liken::controller
