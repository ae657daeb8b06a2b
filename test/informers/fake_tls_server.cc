#include "test/informers/fake_tls_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "informers/client_identity.h"

namespace liken::testing {
namespace {

void Check(bool ok, const char* what) { AbortUnless(ok, "fake TLS server", what); }

// Any client certificate is fine: the test only records which one was presented.
int AcceptAnyClient(int, X509_STORE_CTX*) { return 1; }

SSL_CTX* NewContext(const TestKeyPair& server) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  Check(ctx != nullptr, "SSL_CTX_new");
  BIO* cert_bio = BIO_new_mem_buf(server.cert_pem.data(), static_cast<int>(server.cert_pem.size()));
  BIO* key_bio = BIO_new_mem_buf(server.key_pem.data(), static_cast<int>(server.key_pem.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  Check(cert != nullptr && key != nullptr, "read server certificate");
  Check(SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1, "use server certificate");
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cert_bio);
  BIO_free(key_bio);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAnyClient);
  return ctx;
}

}  // namespace

FakeTlsServer::FakeTlsServer(const TestKeyPair& server) {
  {
    absl::MutexLock lock(&mu_);
    ctx_ = NewContext(server);
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  Check(listen_fd_ >= 0, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  Check(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0, "bind");
  Check(::listen(listen_fd_, 16) == 0, "listen");
  socklen_t len = sizeof(addr);
  Check(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0, "getsockname");
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeTlsServer::~FakeTlsServer() {
  std::vector<std::thread> connections;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  {
    absl::MutexLock lock(&mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);  // accepted during shutdown
    connections.swap(connections_);
  }
  for (auto& t : connections) t.join();
  ::close(listen_fd_);
  absl::MutexLock lock(&mu_);
  SSL_CTX_free(ctx_);
}

std::string FakeTlsServer::url() const { return "https://127.0.0.1:" + std::to_string(port_); }

void FakeTlsServer::SetCertificate(const TestKeyPair& server) {
  SSL_CTX* next = NewContext(server);
  absl::MutexLock lock(&mu_);
  SSL_CTX_free(ctx_);  // connections using it hold their own reference
  ctx_ = next;
}

int FakeTlsServer::Handshakes() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(client_subjects_.size());
}

std::vector<std::string> FakeTlsServer::ClientSubjects() const {
  absl::MutexLock lock(&mu_);
  return client_subjects_;
}

int FakeTlsServer::Requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

void FakeTlsServer::AcceptLoop() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    absl::MutexLock lock(&mu_);
    if (fd < 0 || stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    open_fds_.push_back(fd);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeTlsServer::Serve(int fd) {
  // A client that goes away makes a write raise SIGPIPE; blocked on this thread, the write fails instead.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  SSL* ssl = nullptr;
  {
    absl::MutexLock lock(&mu_);
    ssl = SSL_new(ctx_);
  }
  if (ssl != nullptr && SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1) {
    X509* peer = SSL_get1_peer_certificate(ssl);
    {
      absl::MutexLock lock(&mu_);
      client_subjects_.push_back(informers::SubjectOf(peer));
    }
    X509_free(peer);
    std::string buffer;
    char chunk[4096];
    while (true) {
      int n = SSL_read(ssl, chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      size_t end;
      bool failed = false;
      while ((end = buffer.find("\r\n\r\n")) != std::string::npos) {  // requests without a body (GET)
        buffer.erase(0, end + 4);
        const std::string body = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"}})";
        const std::string response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                     std::to_string(body.size()) + "\r\n\r\n" + body;
        {
          absl::MutexLock lock(&mu_);
          ++requests_;  // before the answer, which the test may be waiting for
        }
        if (SSL_write(ssl, response.data(), static_cast<int>(response.size())) <= 0) {
          failed = true;
          break;
        }
      }
      if (failed) break;
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  absl::MutexLock lock(&mu_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

}  // namespace liken::testing
