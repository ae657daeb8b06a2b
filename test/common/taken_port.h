// A loopback port that another process holds, for tests of what a taken address does.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace liken::testing {

// A listening socket on a loopback port the kernel picks: the port is taken while it lives (or until Free).
// A bind or listen that fails is a test failure, and listening() says so.
class TakenPort {
 public:
  TakenPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int bound = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    EXPECT_EQ(bound, 0);
    const int listened = ::listen(fd_, 1);
    EXPECT_EQ(listened, 0);
    listening_ = bound == 0 && listened == 0;
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  TakenPort(const TakenPort&) = delete;
  TakenPort& operator=(const TakenPort&) = delete;
  ~TakenPort() { Free(); }

  // Closes the socket: the port is free again.
  void Free() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool listening() const { return listening_; }
  int port() const { return port_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  bool listening_ = false;
};

}  // namespace liken::testing
