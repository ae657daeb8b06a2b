// Benchmarks for the daemon's reconcile side. They print figures; they assert nothing about time.
//  - hot-plug latency: a uevent burst (coalescer notify) to the slice written on the API server;
//  - idle cost: API writes and CPU while nothing changes;
//  - memory: RSS with a 128-device slice and 1,000 claims in the node-local claim cache.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "controller/node_pass_loop.h"
#include "controller/slice_sync.h"
#include "controller/triggers.h"
#include "common/workqueue.h"
#include "informers/claim_cache.h"
#include "informers/informer.h"
#include "informers/rest_client.h"
#include "test/informers/fake_api_server.h"

namespace liken::controller {
namespace {

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

class EnqueueAll : public informers::EventHandler {
 public:
  explicit EnqueueAll(WorkQueue* q) : q_(q) {}
  void OnAdd(const informers::ObjectPtr&) override { q_->Add(NodePassLoop::kKey); }
  void OnUpdate(const informers::ObjectPtr&, const informers::ObjectPtr&) override { q_->Add(NodePassLoop::kKey); }
  void OnDelete(const informers::ObjectPtr&) override { q_->Add(NodePassLoop::kKey); }

 private:
  WorkQueue* q_;
};

int Run() {
  liken::testing::FakeApiServer server;
  server.Upsert("nodes", {{"metadata", {{"name", "node-a"}, {"uid", "node-uid"}}}});
  auto clock = NewRealClock();
  informers::KubeConfig config;
  config.server = server.url();
  config.qps = 0;
  auto client = *informers::NewRestClient(config, clock.get());
  WorkQueue queue(clock.get(), NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30)));
  EnqueueAll handler(&queue);
  informers::InformerOptions options;
  options.resource = "resourceslices";
  options.path = informers::ResourceSlicesPath();
  options.field_selector = "spec.nodeName=node-a,spec.driver=liken.sh";
  informers::Informer informer(client.get(), clock.get(), options, &handler);
  absl::Mutex mu;
  int devices = 128;
  SliceSync sync("node-a", "liken.sh", client.get(), informer.store());
  auto desired = [&] {
    absl::MutexLock lock(&mu);
    apis::ResourceSlice s;
    s.metadata.name = "node-a-liken.sh";
    s.pool.name = "node-a";
    for (int i = 0; i < devices; ++i) {
      apis::SliceDevice d;
      d.name = absl::StrCat("usb-", i);
      d.attributes["liken.sh/bus"] = std::string("usb");
      d.attributes["liken.sh/vendor"] = std::string("1d6b");
      s.devices.push_back(d);
    }
    return std::vector<apis::ResourceSlice>{s};
  };
  NodePassLoop loop(&queue, absl::Seconds(60), [&] { return sync.Sync(desired()).status(); });
  Coalescer coalescer(clock.get(), absl::Milliseconds(50), absl::Milliseconds(250),
                      [&] { queue.Add(NodePassLoop::kKey); });
  informer.Start();
  informer.WaitForSync();
  coalescer.Start();
  loop.Start();
  auto slice_devices = [&] {
    auto s = server.Object("resourceslices", "node-a-liken.sh");
    return s.is_null() ? -1 : static_cast<int>(s["spec"]["devices"].size());
  };
  while (slice_devices() != 128) std::this_thread::yield();

  // Hot-plug latency: the device appears, its uevents arrive in a burst, the slice is rewritten.
  std::vector<double> ms;
  for (int round = 0; round < 20; ++round) {
    absl::SleepFor(absl::Milliseconds(100));  // let the previous round's echo (our own write's event) settle
    int want;
    {
      absl::MutexLock lock(&mu);
      devices = round % 2 == 0 ? 127 : 128;
      want = devices;
    }
    absl::Time t0 = absl::Now();
    for (int e = 0; e < 5; ++e) coalescer.Notify();  // add usb, add interface, bind, add tty, add usbfs node
    while (slice_devices() != want) std::this_thread::yield();
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
  }
  std::sort(ms.begin(), ms.end());
  std::printf("hot-plug latency (last uevent to slice written, 50 ms quiet window): p50 %.1f ms, max %.1f ms\n",
              ms[ms.size() / 2], ms.back());

  // Idle: nothing changes; forced passes write nothing.
  absl::SleepFor(absl::Milliseconds(300));
  int writes = server.CountWrites();
  double cpu0 = CpuSeconds();
  for (int i = 0; i < 20; ++i) {
    int passes = loop.passes();
    queue.Add(NodePassLoop::kKey);
    while (loop.passes() == passes) std::this_thread::yield();
  }
  std::printf("idle: 20 passes with nothing changed: %d API writes\n", server.CountWrites() - writes);
  double cpu1 = CpuSeconds();
  absl::SleepFor(absl::Seconds(2));
  std::printf("idle: CPU over 2 s with nothing happening: %.1f ms\n", (CpuSeconds() - cpu1) * 1000);
  (void)cpu0;

  // Memory: 1,000 pods on this node, each with a claim, cached.
  for (int i = 0; i < 1000; ++i) {
    nlohmann::json claim = {{"apiVersion", "resource.k8s.io/v1"},
                            {"kind", "ResourceClaim"},
                            {"metadata", {{"name", absl::StrCat("claim-", i)}, {"namespace", "ns"}}},
                            {"spec", nlohmann::json::object()}};
    claim["status"]["allocation"]["devices"]["results"] = {
        {{"request", "r"}, {"driver", "liken.sh"}, {"pool", "node-a"}, {"device", absl::StrCat("usb-", i % 128)}}};
    server.Upsert("resourceclaims", claim);
    nlohmann::json pod = {{"metadata", {{"name", absl::StrCat("pod-", i)}, {"namespace", "ns"}}}};
    pod["spec"]["nodeName"] = "node-a";
    pod["spec"]["resourceClaims"] = nlohmann::json::array();
    pod["spec"]["resourceClaims"].push_back({{"name", "r"}, {"resourceClaimName", absl::StrCat("claim-", i)}});
    server.Upsert("pods", pod);
  }
  absl::SleepFor(absl::Milliseconds(200));
  long before = RssKb();
  informers::ClaimCache claims(client.get(), clock.get(), "node-a");
  claims.Start();
  claims.WaitForSync();
  while (claims.CachedKeys().size() < 1000) std::this_thread::yield();
  std::printf("memory: process RSS %ld kB with a 128-device slice and 1000 cached claims (claim cache +%ld kB; "
              "the process includes the test API server)\n",
              RssKb(), RssKb() - before);
  claims.Stop();
  loop.Stop();
  coalescer.Stop();
  informer.Stop();
  return 0;
}

}  // namespace
}  // namespace liken::controller

int main() { return liken::controller::Run(); }
