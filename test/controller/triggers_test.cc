#include "controller/triggers.h"

#include <arpa/inet.h>

#include <cstring>
#include <deque>
#include <thread>

#include <gtest/gtest.h>

#include "controller/uevent_message.h"
#include "test/common/fake_clock.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClock;

std::string Kernel(const std::string& head, const std::vector<std::string>& props) {
  std::string m = head;
  m.push_back('\0');
  for (const auto& p : props) {
    m += p;
    m.push_back('\0');
  }
  return m;
}

// libudev's monitor format, as umockdev delivers it.
std::string Libudev(const std::vector<std::string>& props) {
  std::string body;
  for (const auto& p : props) {
    body += p;
    body.push_back('\0');
  }
  std::string m("libudev\0", 8);
  uint32_t header[8] = {htonl(0xfeedcafe), 40, 40, static_cast<uint32_t>(body.size()), 0, 0, 0, 0};
  m.append(reinterpret_cast<const char*>(header), sizeof(header));
  return m + body;
}

TEST(UeventParseTest, KernelFormat) {
  auto e = ParseUeventMessage(Kernel("add@/devices/pci0000:00/0000:00:14.0/usb1/1-4",
                                     {"ACTION=add", "DEVPATH=/devices/pci0000:00/0000:00:14.0/usb1/1-4",
                                      "SUBSYSTEM=usb", "DEVNAME=bus/usb/001/005", "SEQNUM=42"}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->action, "add");
  EXPECT_EQ(e->devpath, "/devices/pci0000:00/0000:00:14.0/usb1/1-4");
  EXPECT_EQ(e->subsystem, "usb");
  EXPECT_EQ(e->properties["DEVNAME"], "bus/usb/001/005");
  EXPECT_TRUE(IsRelevantUevent(*e));
}

TEST(UeventParseTest, LibudevFormat) {
  auto e = ParseUeventMessage(
      Libudev({"ACTION=bind", "DEVPATH=/devices/pci0000:00/0000:03:00.0", "SUBSYSTEM=pci", "DRIVER=vfio-pci"}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->action, "bind");
  EXPECT_EQ(e->devpath, "/devices/pci0000:00/0000:03:00.0");
  EXPECT_EQ(e->subsystem, "pci");
  EXPECT_EQ(e->properties["DRIVER"], "vfio-pci");
  EXPECT_TRUE(IsRelevantUevent(*e));
}

TEST(UeventParseTest, MalformedMessagesAreErrors) {
  EXPECT_FALSE(ParseUeventMessage("").ok());
  EXPECT_FALSE(ParseUeventMessage("no at sign").ok());
  EXPECT_FALSE(ParseUeventMessage(std::string("libudev\0\1\2", 10)).ok()) << "truncated header";
  std::string bad = Libudev({"ACTION=add"});
  uint32_t huge = 100000;
  std::memcpy(bad.data() + 8 + 12, &huge, 4);  // properties_len beyond the message
  EXPECT_FALSE(ParseUeventMessage(bad).ok());
  std::string wrong_magic = Libudev({"ACTION=add", "DEVPATH=/x"});
  wrong_magic[8] = 0;
  EXPECT_FALSE(ParseUeventMessage(wrong_magic).ok());
  EXPECT_FALSE(ParseUeventMessage(Libudev({"SUBSYSTEM=pci"})).ok()) << "no action or devpath";
}

TEST(UeventRelevanceTest, FiltersVirtualDevicesAndOtherActions) {
  auto relevant = [](const std::string& action, const std::string& devpath, const std::string& subsystem,
                     bool devname = false) {
    Uevent e{action, devpath, subsystem, {}};
    if (devname) e.properties["DEVNAME"] = "x";
    return IsRelevantUevent(e);
  };
  EXPECT_TRUE(relevant("remove", "/devices/pci0000:00/0000:00:14.0/usb1/1-4", "usb"));
  EXPECT_TRUE(relevant("unbind", "/devices/pci0000:00/0000:03:00.0", "pci"));
  EXPECT_FALSE(relevant("add", "/devices/virtual/net/veth1234", "net"));
  EXPECT_FALSE(relevant("add", "/devices/virtual/block/loop0", "block", true));
  EXPECT_FALSE(relevant("change", "/devices/pci0000:00/0000:03:00.0", "pci"));
  EXPECT_FALSE(relevant("move", "/devices/pci0000:00/0000:03:00.0", "pci"));
  EXPECT_FALSE(relevant("add", "/devices/pci0000:00/0000:00:1f.6/net/eth0", "net"));
  EXPECT_TRUE(relevant("add", "/devices/pci0000:00/0000:00:02.0/drm/renderD128", "drm", true));
}

TEST(CoalescerTest, FiresOnceAfterAQuietWindow) {
  FakeClock clock;
  std::atomic<int> fired{0};
  Coalescer c(&clock, absl::Milliseconds(50), absl::Milliseconds(500), [&] { ++fired; });
  c.Start();
  c.Notify();
  while (clock.waiters() == 0) std::this_thread::yield();
  clock.Advance(absl::Milliseconds(30));
  c.Notify();  // the burst goes on: the window restarts
  clock.Advance(absl::Milliseconds(30));
  c.Notify();
  clock.Advance(absl::Milliseconds(49));
  EXPECT_EQ(fired.load(), 0);
  clock.Advance(absl::Milliseconds(1));
  while (fired.load() == 0) std::this_thread::yield();
  clock.Advance(absl::Seconds(10));
  c.Stop();
  EXPECT_EQ(fired.load(), 1) << "one burst, one resync";
}

TEST(CoalescerTest, AnEndlessBurstStillFiresByTheMaximumDelay) {
  FakeClock clock;
  std::atomic<int> fired{0};
  Coalescer c(&clock, absl::Milliseconds(50), absl::Milliseconds(200), [&] { ++fired; });
  c.Start();
  for (int i = 0; i < 10 && fired.load() == 0; ++i) {
    c.Notify();
    while (clock.waiters() == 0 && fired.load() == 0) std::this_thread::yield();
    clock.Advance(absl::Milliseconds(40));
  }
  while (fired.load() == 0) std::this_thread::yield();
  c.Stop();
  EXPECT_EQ(fired.load(), 1);
}

class ScriptedSource : public UeventSource {
 public:
  explicit ScriptedSource(std::deque<std::string> messages) : messages_(std::move(messages)) {}
  absl::StatusOr<std::string> Receive() override {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](ScriptedSource* s) ABSL_NO_THREAD_SAFETY_ANALYSIS { return s->closed_ || !s->messages_.empty(); }, this));
    if (!messages_.empty()) {
      std::string m = messages_.front();
      messages_.pop_front();
      return m;
    }
    return absl::CancelledError("closed");
  }
  void Close() override {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  bool drained() {
    absl::MutexLock lock(&mu_);
    return messages_.empty();
  }

 private:
  absl::Mutex mu_;
  std::deque<std::string> messages_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

class CountingObserver : public UeventObserver {
 public:
  void OnUevent(bool acted) override {
    ++seen;
    if (acted) ++acted_on;
  }
  std::atomic<int> seen{0};
  std::atomic<int> acted_on{0};
};

TEST(UeventListenerTest, ForwardsRelevantEventsAndCountsAll) {
  FakeClock clock;
  std::atomic<int> fired{0};
  Coalescer coalescer(&clock, absl::Milliseconds(50), absl::Milliseconds(500), [&] { ++fired; });
  auto source = std::make_unique<ScriptedSource>(std::deque<std::string>{
      Kernel("add@/devices/virtual/net/veth1", {"SUBSYSTEM=net"}),
      Kernel("add@/devices/pci0000:00/0000:00:14.0/usb1/1-4", {"SUBSYSTEM=usb"}),
      Libudev({"ACTION=bind", "DEVPATH=/devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0", "SUBSYSTEM=usb"}),
      "garbage",
  });
  ScriptedSource* raw = source.get();
  CountingObserver observer;
  UeventListener listener(std::move(source), &coalescer, &observer);
  coalescer.Start();
  listener.Start();
  while (observer.seen.load() < 4) std::this_thread::yield();
  EXPECT_TRUE(raw->drained());
  EXPECT_EQ(observer.acted_on.load(), 2);
  while (clock.waiters() == 0) std::this_thread::yield();
  clock.Advance(absl::Milliseconds(50));
  while (fired.load() == 0) std::this_thread::yield();
  listener.Stop();
  coalescer.Stop();
  EXPECT_EQ(fired.load(), 1) << "two relevant events in one burst: one resync";
}

// Reports dropped messages once, then blocks until closed.
class OverflowingSource : public UeventSource {
 public:
  absl::StatusOr<std::string> Receive() override {
    absl::MutexLock lock(&mu_);
    if (!reported_) {
      reported_ = true;
      return absl::DataLossError("dropped");
    }
    mu_.Await(absl::Condition(&closed_));
    return absl::CancelledError("closed");
  }
  void Close() override {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

 private:
  absl::Mutex mu_;
  bool reported_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(UeventListenerTest, DroppedMessagesTriggerARescanAndTheListenerGoesOn) {
  FakeClock clock;
  std::atomic<int> fired{0};
  Coalescer coalescer(&clock, absl::Milliseconds(50), absl::Milliseconds(500), [&] { ++fired; });
  CountingObserver observer;
  UeventListener listener(std::make_unique<OverflowingSource>(), &coalescer, &observer);
  coalescer.Start();
  listener.Start();
  // The overflow notifies the coalescer (its thread then waits for the quiet window): a pass follows.
  while (clock.waiters() == 0) std::this_thread::yield();
  clock.Advance(absl::Milliseconds(50));
  while (fired.load() == 0) std::this_thread::yield();
  listener.Stop();
  coalescer.Stop();
  EXPECT_EQ(fired.load(), 1);
  EXPECT_EQ(observer.seen.load(), 0) << "an overflow is not a uevent";
}

}  // namespace
}  // namespace liken::controller
