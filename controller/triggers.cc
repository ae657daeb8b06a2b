#include "controller/triggers.h"

#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {

Coalescer::Coalescer(Clock* clock, absl::Duration quiet, absl::Duration max_delay, std::function<void()> fire)
    : clock_(clock), quiet_(quiet), max_delay_(max_delay), fire_(std::move(fire)),
      waker_(std::make_unique<ScopedClockWaker>(clock, &mu_)) {}

Coalescer::~Coalescer() {
  Stop();
  waker_.reset();
}

void Coalescer::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(std::move(stop)); });
}

void Coalescer::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void Coalescer::Notify() {
  absl::MutexLock lock(&mu_);
  absl::Time now = clock_->Now();
  if (!pending_) {
    pending_ = true;
    first_ = now;
  }
  last_ = now;
}

void Coalescer::Run(std::stop_token stop) {
  // A stop request wakes the waits below: they re-check stopped_ when the callback releases mu_.
  std::stop_callback wake(stop, [this] {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  });
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Coalescer* c) ABSL_NO_THREAD_SAFETY_ANALYSIS { return c->pending_ || c->stopped_; }, this));
      while (!stopped_) {
        absl::Time deadline = std::min(last_ + quiet_, first_ + max_delay_);
        if (clock_->Now() >= deadline) break;
        // Wake on the deadline, on stop, or on a new Notify (which moves the deadline).
        struct Pred {
          Coalescer* c;
          absl::Time last;
          bool Eval() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return c->stopped_ || c->last_ != last; }
        } pred{this, last_};
        clock_->AwaitWithDeadline(&mu_, absl::Condition(&pred, &Pred::Eval), deadline);
      }
      if (stopped_) return;
      pending_ = false;
    }
    fired_.fetch_add(1);
    fire_();
  }
}

namespace {

class NetlinkSource final : public UeventSource {
 public:
  NetlinkSource(int sock, int wake) : sock_(sock), wake_(wake) {}
  ~NetlinkSource() override {
    ::close(sock_);
    ::close(wake_);
  }

  absl::StatusOr<std::string> Receive() override {
    std::vector<char> buf(16 * 1024);
    while (true) {
      pollfd fds[2] = {{sock_, POLLIN, 0}, {wake_, POLLIN, 0}};
      int n = ::poll(fds, 2, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(absl::StrCat("poll on the uevent socket: ", std::strerror(errno)));
      }
      if (fds[1].revents != 0) return absl::CancelledError("uevent source closed");
      ssize_t got = ::recv(sock_, buf.data(), buf.size(), MSG_DONTWAIT);
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        if (errno == ENOBUFS) return absl::DataLossError("the kernel dropped uevents (socket buffer overflow)");
        return absl::InternalError(absl::StrCat("recv on the uevent socket: ", std::strerror(errno)));
      }
      return std::string(buf.data(), static_cast<size_t>(got));
    }
  }

  void Close() override {
    uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof(one));
  }

 private:
  const int sock_;
  const int wake_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<UeventSource>> OpenNetlinkUevents() {
  int sock = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  if (sock < 0) return absl::UnavailableError(absl::StrCat("uevent socket: ", std::strerror(errno)));
  int size = 1 << 20;
  ::setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = 1;  // the kernel's uevent group
  if (::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    ::close(sock);
    return absl::UnavailableError(absl::StrCat("uevent socket bind: ", std::strerror(err)));
  }
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    int err = errno;
    ::close(sock);
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(err)));
  }
  return std::unique_ptr<UeventSource>(std::make_unique<NetlinkSource>(sock, wake));
}

UeventListener::UeventListener(std::unique_ptr<UeventSource> source, Coalescer* coalescer, UeventObserver* observer)
    : source_(std::move(source)), coalescer_(coalescer), observer_(observer) {}

UeventListener::~UeventListener() { Stop(); }

void UeventListener::Start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    std::stop_callback close(stop, [this] { source_->Close(); });  // wakes a blocked Receive
    Run();
  });
}

void UeventListener::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void UeventListener::Run() {
  while (true) {
    auto message = source_->Receive();
    if (message.status().code() == absl::StatusCode::kDataLoss) {
      LogWarning("uevents were lost; rescanning everything", {{"error", message.status().ToString()}});
      coalescer_->Notify();
      continue;
    }
    if (!message.ok()) {
      if (message.status().code() != absl::StatusCode::kCancelled) {
        LogError("uevent listener stopped; the periodic resync remains", {{"error", message.status().ToString()}});
      }
      return;
    }
    auto event = ParseUeventMessage(*message);
    if (!event.ok()) {
      LogDebug("ignoring a malformed uevent", {{"error", event.status().ToString()}});
      if (observer_ != nullptr) observer_->OnUevent(false);
      continue;
    }
    bool acted = IsRelevantUevent(*event);
    if (observer_ != nullptr) observer_->OnUevent(acted);
    if (acted) {
      LogDebug("uevent", {{"action", event->action}, {"devpath", event->devpath}, {"subsystem", event->subsystem}});
      coalescer_->Notify();
    }
  }
}

}  // namespace liken::controller
