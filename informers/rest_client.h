// The KubeClient that talks HTTPS to a real API server (cpprestsdk underneath).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "controller/clock.h"
#include "informers/kube_client.h"
#include "informers/kube_config.h"

namespace liken::informers {

// Creates a client for `config`: bearer token (re-read from token_file when it changes), client
// certificate, CA; QPS/burst limits; retries of 429/5xx/transport errors with backoff that honours
// Retry-After; User-Agent. `clock` (for waits) must outlive the client. InvalidArgument for a bad server
// URL. Thread-safe.
absl::StatusOr<std::unique_ptr<KubeClient>> NewRestClient(const KubeConfig& config, controller::Clock* clock);

// Sizes the HTTP library's process-wide I/O thread pool (its default is 40 threads). Call once, before the
// first client exists; later calls have no effect. The daemon needs few: watches do not hold a thread.
// Not thread-safe against concurrent client creation.
void SetHttpThreads(size_t threads);

}  // namespace liken::informers
