// Flap benchmark: a USB serial adapter (the laptop recording's FTDI 0403:6001 on port 1-1) unplugged and plugged back
// with real uevents under umockdev, against a stub API server that counts slice writes; damping and the write budget
// off, then on, in the same run. Prints, for each: the single unplug's and plug's latency (the uevent to the slice
// on the server), the slice writes while it flaps at 10 Hz for 20 s (and a minute's worth), and how long after the
// flapping stops the adapter is published again. It asserts nothing about time.
//
// The process owns the testbed and the driver's parts run inside it, all under umockdev's preload:
//   umockdev-wrapper build/test/controller/liken_flap_benchmark [RECORDING] [FLAP_SECONDS]
#include <umockdev.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "controller/node_reconciler.h"
#include "controller/triggers.h"
#include "discovery/scanner.h"
#include "informers/rest_client.h"
#include "test/informers/fake_api_server.h"

namespace liken::controller {
namespace {

constexpr char kAdapter[] = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1";
constexpr char kSerial[] = "A50285BI";

// A node whose prepared claims hold nothing: the inventory is kept, nothing is refreshed.
class NoClaims final : public nodestate::NodeDevices {
 public:
  void UpdateInventory(const discovery::Inventory&, discovery::ScanClock::time_point) override {}
  absl::StatusOr<int> RefreshPreparedClaims() override { return 0; }
  std::vector<nodestate::HeldDevice> HeldDevices() const override { return {}; }
  std::optional<std::set<std::string>> PresentDevices() const override { return std::nullopt; }
};

// The recording's blocks of the adapter and everything below it (to plug it in again).
std::string AdapterBlocks(const std::string& recording) {
  std::ifstream in(recording);
  std::stringstream all;
  all << in.rdbuf();
  const std::string prefix = std::string("P: ") + (kAdapter + 4);  // the recording's paths start at /devices
  std::string out;
  for (absl::string_view block : absl::StrSplit(all.str(), "\n\n")) {
    if (absl::StartsWith(block, prefix + "\n") || absl::StartsWith(block, prefix + "/")) {
      absl::StrAppend(&out, block, "\n\n");
    }
  }
  return out;
}

struct Figures {
  std::vector<double> unplug_ms, plug_ms;
  int flap_writes = 0;
  double flap_seconds = 0;
  double republished_s = -1;
  int settle_writes = 0;
  int deferred = 0;
  int changes = 0;
  int passes = 0;  // node passes from the flapping's start until it is published again
};

class Bench {
 public:
  Bench(UMockdevTestbed* testbed, std::string blocks) : testbed_(testbed), blocks_(std::move(blocks)) {
    for (absl::string_view line : absl::StrSplit(blocks_, '\n')) {
      if (absl::StartsWith(line, "N: ")) continue;  // umockdev keeps a removed device's node: added once, at load
      if (absl::ConsumePrefix(&line, "P: ")) paths_.push_back(absl::StrCat("/sys", line));
    }
    for (absl::string_view line : absl::StrSplit(blocks_, '\n')) {
      if (!absl::StartsWith(line, "N: ")) absl::StrAppend(&replug_, line, "\n");
    }
  }

  void Unplug() {
    uevent_at_ = absl::Now();
    umockdev_testbed_uevent(testbed_, kAdapter, "remove");
    // Deepest first: each removal takes its own bus and class links with it, so the adapter can be added again.
    for (auto it = paths_.rbegin(); it != paths_.rend(); ++it) umockdev_testbed_remove_device(testbed_, it->c_str());
  }
  void Plug() {
    GError* error = nullptr;
    if (!umockdev_testbed_add_from_string(testbed_, replug_.c_str(), &error)) {
      std::fprintf(stderr, "cannot plug the adapter in: %s\n", error->message);
      g_error_free(error);
      std::exit(1);
    }
    uevent_at_ = absl::Now();
    umockdev_testbed_uevent(testbed_, kAdapter, "add");
  }

  Figures Run(bool damping, absl::Duration flap) {
    liken::testing::FakeApiServer server;
    server.Upsert("nodes", {{"metadata", {{"name", "laptop"}, {"uid", "node-uid"}}}});
    auto clock = NewRealClock();
    informers::KubeConfig config;
    config.server = server.url();
    config.qps = 0;
    auto client = *informers::NewRestClient(config, clock.get());
    discovery::ScanOptions scan_options;
    scan_options.match_modules = false;
    auto scanner = discovery::NewSysfsScanner(scan_options);
    auto uevents = OpenNetlinkUevents();
    if (!uevents.ok()) {
      std::fprintf(stderr, "no uevent socket: %s\n", uevents.status().ToString().c_str());
      std::exit(1);
    }
    NoClaims devices;
    NodeReconcilerOptions options;
    options.node_name = "laptop";
    options.flap_damping.enabled = damping;
    options.slice_write_budget.enabled = damping;
    std::stop_source shutdown;
    NodeReconciler reconciler(options, client.get(), clock.get(), scanner.get(), &devices, *std::move(uevents), nullptr,
                              shutdown.get_token());
    reconciler.Start();
    const auto published = [&] {
      return server.Object("resourceslices", "laptop-liken.sh").dump().find(kSerial) != std::string::npos;
    };
    // How long after the last uevent sent the slice on the server shows `want`; -1 when not within `limit`.
    const auto await = [&](bool want, absl::Duration limit) {
      const absl::Time start = uevent_at_;
      while (published() != want) {
        if (absl::Now() - start > limit) return -1.0;
        absl::SleepFor(absl::Milliseconds(2));
      }
      return absl::ToDoubleMilliseconds(absl::Now() - start);
    };
    Figures f;
    if (await(true, absl::Seconds(10)) < 0) {
      std::fprintf(stderr, "the adapter was never published\n");
      std::exit(1);
    }
    // Single events, 10.5 s apart: past the budget's refill and far from damping.
    for (int i = 0; i < 2; ++i) {
      absl::SleepFor(absl::Milliseconds(10500));
      Unplug();
      f.unplug_ms.push_back(await(false, absl::Seconds(10)));
      absl::SleepFor(absl::Milliseconds(10500));
      Plug();
      f.plug_ms.push_back(await(true, absl::Seconds(10)));
    }
    absl::SleepFor(absl::Milliseconds(10500));
    // 10 Hz: a change every 100 ms (unplugged, then plugged back 100 ms later, ...); it ends plugged in.
    const int before = server.CountWrites();
    const int passes_before = reconciler.passes();
    const absl::Time flap_start = absl::Now();
    bool in = true;
    int changes = 0;
    for (int i = 0; absl::Now() - flap_start < flap || !in; ++i) {
      if (in) Unplug(); else Plug();
      ++changes;
      in = !in;
      const absl::Duration left = flap_start + absl::Milliseconds(100) * (i + 1) - absl::Now();
      if (left > absl::ZeroDuration()) absl::SleepFor(left);
    }
    const absl::Time flap_end = absl::Now();
    absl::SleepFor(absl::Milliseconds(300));  // the last burst's pass
    f.flap_writes = server.CountWrites() - before;
    f.flap_seconds = absl::ToDoubleSeconds(flap_end - flap_start);
    const int settled_from = server.CountWrites();
    const double republished_ms = await(true, absl::Seconds(120));
    f.republished_s = republished_ms < 0 ? -1 : absl::ToDoubleSeconds(absl::Now() - flap_end);
    f.changes = changes;
    f.passes = reconciler.passes() - passes_before;
    absl::SleepFor(absl::Seconds(1));
    f.settle_writes = server.CountWrites() - settled_from;
    f.deferred = reconciler.deferred_writes();
    shutdown.request_stop();
    reconciler.Stop();
    return f;
  }

 private:
  UMockdevTestbed* const testbed_;
  const std::string blocks_;
  absl::Time uevent_at_ = absl::Now();  // when the last uevent was sent
  std::vector<std::string> paths_;  // the adapter's sysfs paths, parents first
  std::string replug_;              // its blocks without their /dev nodes (umockdev keeps those after a removal)
};

std::string Ms(const std::vector<double>& v) {
  std::vector<std::string> parts;
  for (double x : v) parts.push_back(x < 0 ? "never" : absl::StrFormat("%.0f", x));
  return absl::StrJoin(parts, ", ");
}

int Main(int argc, char** argv) {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::string(preload).find("umockdev") == std::string::npos) {
    std::fprintf(stderr, "run it under umockdev's preload: umockdev-wrapper %s [RECORDING] [FLAP_SECONDS]\n", argv[0]);
    return 2;
  }
  const std::string recording = argc > 1 ? argv[1] : LIKEN_SOURCE_DIR "/test/machines/laptop.umockdev";
  const int flap_seconds = argc > 2 ? std::atoi(argv[2]) : 20;
  UMockdevTestbed* testbed = umockdev_testbed_new();
  GError* error = nullptr;
  if (!umockdev_testbed_add_from_file(testbed, recording.c_str(), &error)) {
    std::fprintf(stderr, "cannot load %s: %s\n", recording.c_str(), error->message);
    return 1;
  }
  Bench bench(testbed, AdapterBlocks(recording));
  std::printf("Flap benchmark: %s, its FTDI adapter on port 1-1 flapping at 10 Hz for %d s\n\n", recording.c_str(),
              flap_seconds);
  std::printf("| damping and write budget | unplug to slice, ms | plug to slice, ms | slice writes while flapping "
              "| writes a minute | published again after it stops | writes meanwhile | passes deferred | changes sent | passes |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (bool damping : {false, true}) {
    Figures f = bench.Run(damping, absl::Seconds(flap_seconds));
    std::printf("| %s | %s | %s | %d in %.1f s | %.0f | %s | %d | %d | %d | %d |\n", damping ? "on" : "off",
                Ms(f.unplug_ms).c_str(), Ms(f.plug_ms).c_str(), f.flap_writes, f.flap_seconds,
                f.flap_writes * 60.0 / f.flap_seconds,
                f.republished_s < 0 ? "not within 120 s" : absl::StrFormat("%.1f s", f.republished_s).c_str(),
                f.settle_writes, f.deferred, f.changes, f.passes);
    std::fflush(stdout);
  }
  g_object_unref(testbed);
  return 0;
}

}  // namespace
}  // namespace liken::controller

int main(int argc, char** argv) { return liken::controller::Main(argc, argv); }
