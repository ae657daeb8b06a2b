// A small HTTPS/1.1 server on 127.0.0.1 for TLS tests of the REST client: it answers every request with 200
// and a Node object, keeps connections alive, asks for (and accepts any) client certificate, and records
// each handshake. Its certificate can be replaced while it runs. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <openssl/ssl.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "test/informers/test_pki.h"

namespace liken::testing {

// The server. Thread-safe.
class FakeTlsServer {
 public:
  // Listens on an ephemeral loopback port presenting `server`. Aborts when it cannot (a broken environment).
  explicit FakeTlsServer(const TestKeyPair& server);
  // Closes every connection and joins every thread.
  ~FakeTlsServer();
  FakeTlsServer(const FakeTlsServer&) = delete;
  FakeTlsServer& operator=(const FakeTlsServer&) = delete;

  // "https://127.0.0.1:<port>".
  std::string url() const;
  // New connections present `server` from now on; open ones keep theirs.
  void SetCertificate(const TestKeyPair& server);
  // Handshakes completed so far.
  int Handshakes() const;
  // The subject ("CN=...") of the client certificate of each completed handshake, "" when none was sent.
  std::vector<std::string> ClientSubjects() const;
  // Requests received on an established connection so far (counted before each answer is sent).
  int Requests() const;

 private:
  void AcceptLoop();
  void Serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  SSL_CTX* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;  // owned; replaced by SetCertificate
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> client_subjects_ ABSL_GUARDED_BY(mu_);
  int requests_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace liken::testing
