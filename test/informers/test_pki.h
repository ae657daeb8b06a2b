// Certificates made at test time with OpenSSL: CAs, servers for 127.0.0.1, clients. For tests only.
#pragma once

#include <string>

namespace liken::testing {

// A certificate and its private key, both PEM.
struct TestKeyPair {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed CA certificate (P-256, valid from an hour ago for a day) with common name `cn`. Aborts the
// test binary when OpenSSL fails (a broken test environment, not a test result).
TestKeyPair MakeTestCa(const std::string& cn);

// Test set-up that cannot go on: prints "<who>: <what> failed" and aborts unless `ok`.
void AbortUnless(bool ok, const char* who, const char* what);

// A certificate with common name `cn` signed by `ca`: for a server, with subjectAltName IP:127.0.0.1 and
// serverAuth; otherwise a client certificate (clientAuth). Aborts like MakeTestCa.
TestKeyPair MakeTestLeaf(const TestKeyPair& ca, const std::string& cn, bool server);

}  // namespace liken::testing
