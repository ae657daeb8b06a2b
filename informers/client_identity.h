// The client certificate (with its chain) and private key this process presents to the API server, parsed
// once and shared by every TLS connection.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <openssl/ssl.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace liken::informers {

// A parsed client certificate chain and the private key that belongs to it. Each new connection takes
// references to the same OpenSSL objects instead of parsing PEM again. Immutable; thread-safe.
class ClientIdentity {
 public:
  // Parses `cert_pem` (the client certificate, then any intermediates) and `key_pem` (its private key).
  // InvalidArgument naming which part is wrong, including a key that does not belong to the certificate.
  // Thread-safe.
  static absl::StatusOr<std::shared_ptr<const ClientIdentity>> FromPem(std::string_view cert_pem,
                                                                       std::string_view key_pem);
  ~ClientIdentity();
  ClientIdentity(const ClientIdentity&) = delete;
  ClientIdentity& operator=(const ClientIdentity&) = delete;

  // Makes `ctx` present this certificate, chain and key. Internal when OpenSSL refuses them (for example a
  // key too weak for the context's security level). Thread-safe.
  absl::Status ApplyTo(SSL_CTX* ctx) const;

  // The certificate's subject, one line ("CN=node-a,O=system:nodes"). Thread-safe.
  std::string Subject() const;

 private:
  ClientIdentity(X509* cert, STACK_OF(X509) * chain, EVP_PKEY* key) : cert_(cert), chain_(chain), key_(key) {}
  X509* const cert_;              // owned
  STACK_OF(X509) * const chain_;  // owned, with its certificates; may be empty
  EVP_PKEY* const key_;           // owned
};

// The subject of `cert` on one line, RFC 2253 ("CN=node-a,O=system:nodes"); "" for null. Thread-safe.
std::string SubjectOf(const X509* cert);

}  // namespace liken::informers
