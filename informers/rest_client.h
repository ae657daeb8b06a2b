// The KubeClient that talks HTTPS to a real API server (cpprestsdk underneath).
#pragma once

#include <memory>
#include <stop_token>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "informers/kube_client.h"
#include "informers/kube_config.h"

namespace liken::informers {

// OK when `config` can work at all: an http(s) URL with a valid host and port, and (for https) a CA, client
// certificate and key that OpenSSL accepts, the key matching the certificate. InvalidArgument says what is
// wrong: such a configuration cannot heal, so retrying it is pointless. Thread-safe.
absl::Status ValidateKubeConfig(const KubeConfig& config);

// Creates a client for `config` (checked by ValidateKubeConfig): bearer token (re-read from token_file when
// it changes), client certificate and key, CA (each re-read from its file when that changes: a stat() before
// each request, a new connection once the material changed; a bad or missing new file keeps the last good
// material); QPS/burst limits; retries of 429/5xx/transport errors with backoff
// that honours Retry-After; User-Agent; the size limits of `config`. Every wait (rate limit, retry backoff,
// the exchange itself) ends with Cancelled once `stop` is raised (the default token never is), and every
// later call fails at once. `clock` (for waits) must outlive the client. Thread-safe.
absl::StatusOr<std::unique_ptr<KubeClient>> NewRestClient(const KubeConfig& config, Clock* clock,
                                                          std::stop_token stop = {});

// Sizes the HTTP library's process-wide I/O thread pool (its default is 40 threads). Call once, before the
// first client exists; later calls have no effect. The daemon needs few: watches do not hold a thread.
// Not thread-safe against concurrent client creation.
void SetHttpThreads(size_t threads);

}  // namespace liken::informers
