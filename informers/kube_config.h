// Where and how to reach the API server: from a kubeconfig file or from the pod's service account.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace liken::informers {

// Connection settings for a KubeClient. PEM fields hold the data itself (files are read when loading); the
// `*_file` fields name the file it came from (empty for inline `*-data`), which the client watches for rotation.
struct KubeConfig {
  std::string server;              // "https://10.0.0.1:443"
  std::string ca_pem;              // empty: the system's trust store
  std::string ca_file;             // where ca_pem was read from (service account ca.crt, certificate-authority)
  bool insecure_skip_tls_verify = false;
  std::string token;               // bearer token, fixed
  std::string token_file;          // bearer token re-read whenever the file changes (service account)
  std::string client_cert_pem;
  std::string client_cert_file;    // where client_cert_pem was read from (client-certificate)
  std::string client_key_pem;
  std::string client_key_file;     // where client_key_pem was read from (client-key)
  double qps = 5;                  // client-side rate limit; <= 0 disables it
  int burst = 10;
  absl::Duration request_timeout = absl::Seconds(30);
  absl::Duration watch_idle_timeout = absl::Minutes(6);  // no bytes for this long ends a watch
  int max_retries = 5;             // for 429/5xx and transport errors
  size_t max_response_bytes = 64 << 20;     // a get or list body; more ends the request (LimitExceeded)
  size_t max_watch_event_bytes = 16 << 20;  // one watch event line; more ends the watch (LimitExceeded)
  size_t max_request_bytes = 3 << 20;       // a body sent (the API server's own default limit)
  std::string user_agent;          // empty: "liken-dra/<version>"
  std::string context_namespace;   // the kubeconfig context's `namespace` (empty: none set); kubectl's default
};

// Reads a file a kubeconfig refers to (a CA, a client certificate or key, a token file).
using KubeconfigFileReader = std::function<absl::StatusOr<std::string>(const std::string& path)>;

// Loads `path` (a kubeconfig) using `context_name`, or its current-context when empty. Relative file
// references resolve against the kubeconfig's folder. InvalidArgument names what is missing or malformed,
// including a tokenFile that cannot be read now (it may rotate later; it must exist at start). Thread-safe.
absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context_name = "");

// LoadKubeconfig on `text` already read from `path` (named in messages; its folder resolves relative
// references), reading referenced files with `read_file`. Thread-safe when `read_file` is.
absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text, const std::string& path,
                                           const std::string& context_name, const KubeconfigFileReader& read_file);

// The in-cluster configuration: `host` and `port` as in KUBERNETES_SERVICE_HOST/PORT, the token file and
// CA bundle from `service_account_dir` (normally /var/run/secrets/kubernetes.io/serviceaccount).
// FailedPrecondition when not running in a pod. Thread-safe.
absl::StatusOr<KubeConfig> InClusterConfig(const std::string& host, const std::string& port,
                                           const std::string& service_account_dir);

// The default User-Agent: "liken-dra/<version>". Thread-safe.
std::string DefaultUserAgent();

}  // namespace liken::informers
