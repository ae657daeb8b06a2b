// Where and how to reach the API server: from a kubeconfig file or from the pod's service account.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace liken::informers {

// Connection settings for a KubeClient. PEM fields hold the data itself (files are read when loading).
struct KubeConfig {
  std::string server;              // "https://10.0.0.1:443"
  std::string ca_pem;              // empty: the system's trust store
  bool insecure_skip_tls_verify = false;
  std::string token;               // bearer token, fixed
  std::string token_file;          // bearer token re-read whenever the file changes (service account)
  std::string client_cert_pem;
  std::string client_key_pem;
  double qps = 5;                  // client-side rate limit; <= 0 disables it
  int burst = 10;
  absl::Duration request_timeout = absl::Seconds(30);
  absl::Duration watch_idle_timeout = absl::Minutes(6);  // no bytes for this long ends a watch
  int max_retries = 5;             // for 429/5xx and transport errors
  std::string user_agent;          // empty: "liken-dra/<version>"
};

// Loads `path` (a kubeconfig) using `context_name`, or its current-context when empty. Relative file
// references resolve against the kubeconfig's folder. InvalidArgument names what is missing or malformed.
// Thread-safe.
absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context_name = "");

// The in-cluster configuration: `host` and `port` as in KUBERNETES_SERVICE_HOST/PORT, the token file and
// CA bundle from `service_account_dir` (normally /var/run/secrets/kubernetes.io/serviceaccount).
// FailedPrecondition when not running in a pod. Thread-safe.
absl::StatusOr<KubeConfig> InClusterConfig(const std::string& host, const std::string& port,
                                           const std::string& service_account_dir);

// The default User-Agent: "liken-dra/<version>". Thread-safe.
std::string DefaultUserAgent();

}  // namespace liken::informers
