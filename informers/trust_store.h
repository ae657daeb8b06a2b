// The API server's trust anchors, parsed once and shared by every TLS connection to it.
#pragma once

#include <memory>
#include <string_view>

#include <openssl/ssl.h>

#include "absl/status/statusor.h"

namespace liken::informers {

// A kubeconfig's (or the service account's) CA bundle as one OpenSSL certificate store. Each new connection
// shares it instead of parsing the PEM again, and trusts exactly these certificates, as client-go does when a
// CA is given: the system bundle that the HTTP client loads into every new context is dropped from it (and
// so is the memory it takes for as long as the connection lives). Immutable; thread-safe.
class TrustStore {
 public:
  // Parses `ca_pem` (one or more PEM certificates). InvalidArgument when no certificate parses. Thread-safe.
  static absl::StatusOr<std::shared_ptr<const TrustStore>> FromPem(std::string_view ca_pem);
  ~TrustStore();
  TrustStore(const TrustStore&) = delete;
  TrustStore& operator=(const TrustStore&) = delete;

  // Makes `ctx` verify peers against these certificates only. Thread-safe.
  void ApplyTo(SSL_CTX* ctx) const;

  // How many certificates the store holds. Thread-safe.
  int size() const;

 private:
  explicit TrustStore(X509_STORE* store) : store_(store) {}
  X509_STORE* const store_;  // owned (one reference)
};

}  // namespace liken::informers
