// Benchmark: KubeletPlugin::RefreshPreparedClaims over many prepared claims (the reconcile loop's pass).
// Prepares N claims over the DRA socket (one device each: USB serial adapters with a usbfs and a tty node,
// USB devices with only a usbfs node, and plain character devices), then times
//   (a) a refresh pass where nothing changed (expects 0 specs written),
//   (b) a refresh pass after 1% of the USB devices re-enumerated (new usbfs path and minor; expects exactly
//       those claims' specs rewritten, checked by comparing every spec file's inode before and after),
//   (c) baselines measured in the same run: lstat of every spec file (what a no-change pass must at least
//       touch), open+read of every spec file, and copying the inventory (what each pass is handed).
// Prints p50/min over the rounds, specs written, and the ratios against the lstat baseline.
//
//   liken_refresh_benchmark [--root DIR] [--claims N] [--rounds N] [--no-metadata]
//
// --no-metadata turns the device metadata files off (the pass then checks one file per claim, not two).
//
// DIR (default /dev/shm, tmpfs) holds the kubelet root, the CDI directory and the checkpoint.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "cdi/claim_spec_store.h"
#include "common/log.h"
#include "kubelet/kubelet_plugin.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/fake_scanner.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"

namespace liken::testing {
namespace {

constexpr char kNode[] = "bench-node";

struct Flags {
  std::string root = "/dev/shm";
  int claims = 10000;
  int rounds = 15;
  bool metadata = true;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--root" && (v = value())) {
      f->root = v;
    } else if (a == "--claims" && (v = value())) {
      f->claims = std::atoi(v);
    } else if (a == "--rounds" && (v = value())) {
      f->rounds = std::atoi(v);
    } else if (a == "--no-metadata") {
      f->metadata = false;
    } else {
      std::fprintf(stderr, "usage: %s [--root DIR] [--claims N] [--rounds N] [--no-metadata]\n", argv[0]);
      return false;
    }
  }
  return f->claims >= 100 && f->rounds > 0;
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

struct Stats {
  double p50 = 0;
  double min = 0;
};

Stats Summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

// The synthetic machine: device i belongs to claim i. Kinds cycle: USB serial (usbfs + tty node), USB with
// only a usbfs node, plain character device. A USB device's usbfs path and minor follow its enumeration
// count, as a re-plugged or reset device gets a new device number on the same port.
enum class Kind { kUsbSerial, kUsbOnly, kPlain };

Kind KindOf(int i) { return static_cast<Kind>(i % 3); }

discovery::PublishedDevice MakeDevice(int i, int enumeration) {
  discovery::PublishedDevice d;
  const int bus = 1 + i / 100;
  const int port = 1 + i % 100;
  switch (KindOf(i)) {
    case Kind::kUsbSerial:
    case Kind::kUsbOnly: {
      const int devnum = 1 + (port + 17 * enumeration) % 127;
      d.name = absl::StrCat("usb-", bus, "-", port, "-1-0");
      d.nodes = {Node(absl::StrFormat("/dev/bus/usb/%03d/%03d", bus, devnum), 189,
                      static_cast<uint32_t>((bus - 1) * 128 + devnum - 1), "usb")};
      if (KindOf(i) == Kind::kUsbSerial) {
        d.nodes.push_back(Node(absl::StrCat("/dev/ttyUSB", i), 188, static_cast<uint32_t>(i), "tty"));
      }
      d.usb_interfaces = {absl::StrCat(bus, "-", port, ":1.0")};
      break;
    }
    case Kind::kPlain:
      d.name = absl::StrCat("dev-", i);
      d.nodes = {Node(absl::StrCat("/dev/test", i), 240, static_cast<uint32_t>(i), "test")};
      break;
  }
  return d;
}

discovery::Inventory MakeInventory(const std::vector<int>& enumeration) {
  std::vector<discovery::PublishedDevice> devices;
  devices.reserve(enumeration.size());
  for (size_t i = 0; i < enumeration.size(); ++i) devices.push_back(MakeDevice(static_cast<int>(i), enumeration[i]));
  return InventoryOf(std::move(devices));
}

// Inode of every claim's spec (0: missing). A rewrite replaces the file (temp file + rename): new inode.
std::vector<ino_t> SpecInodes(const std::string& cdi_root, const std::vector<kubelet::ClaimRef>& refs) {
  std::vector<ino_t> out;
  out.reserve(refs.size());
  for (const auto& r : refs) {
    struct stat st;
    std::string path = absl::StrCat(cdi_root, "/", cdi::ClaimSpecStore::FileName(r.uid));
    out.push_back(::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0);
  }
  return out;
}

int Run(const Flags& flags) {
  SetLogLevel(LogLevel::kError);
  std::string base = absl::StrCat(flags.root, "/liken-refresh-bench-", ::getpid());
  std::filesystem::create_directories(base);
  std::ofstream(base + "/boot_id") << "bench-boot\n";

  const int n = flags.claims;
  std::vector<int> enumeration(n, 0);
  std::vector<int> usb;  // indices of USB devices
  for (int i = 0; i < n; ++i) {
    if (KindOf(i) != Kind::kPlain) usb.push_back(i);
  }
  discovery::Inventory inventory = MakeInventory(enumeration);

  FakeScanner scanner;
  scanner.Set(inventory);
  FakeClaimLookup lookup;
  std::vector<kubelet::ClaimRef> refs;
  for (int i = 0; i < n; ++i) {
    std::string uid = absl::StrFormat("r%07d-0000-4000-8000-000000000000", i);
    std::string name = absl::StrCat("claim-", i);
    TestResult result;
    result.request = "req";
    result.device = MakeDevice(i, 0).name;
    lookup.Add(ClaimJson("bench", name, uid, kNode, {result}));
    refs.push_back({"bench", uid, name});
  }

  kubelet::KubeletPluginOptions o;
  o.node_name = kNode;
  o.kubelet_root = base + "/kubelet";
  o.cdi_root = base + "/cdi";
  o.sysfs_root = base + "/sys";
  o.boot_id_path = base + "/boot_id";
  o.device_metadata = flags.metadata;
  int rc = 0;
  {
    kubelet::KubeletPlugin plugin(o, &scanner, &lookup, nullptr);
    if (auto s = plugin.Start(); !s.ok()) {
      std::fprintf(stderr, "start: %s\n", s.ToString().c_str());
      return 1;
    }
    plugin.UpdateInventory(inventory);
    auto kubelet = TestKubelet::Register(o.kubelet_root, DraVersion::kV1);
    if (!kubelet.ok()) {
      std::fprintf(stderr, "register: %s\n", kubelet.status().ToString().c_str());
      return 1;
    }

    // Prepare every claim, 100 per call.
    absl::Time prep_start = absl::Now();
    int prep_errors = 0;
    for (int i = 0; i < n; i += 100) {
      std::vector<kubelet::ClaimRef> batch(refs.begin() + i, refs.begin() + std::min(n, i + 100));
      auto r = (*kubelet)->Prepare(batch);
      if (!r.ok()) {
        prep_errors += static_cast<int>(batch.size());
        continue;
      }
      for (const auto& ref : batch) {
        auto it = r->find(ref.uid);
        if (it == r->end() || !it->second.error.empty()) ++prep_errors;
      }
    }
    absl::Duration prep_wall = absl::Now() - prep_start;
    if (prep_errors > 0 || plugin.prepared_claims() != static_cast<size_t>(n)) {
      std::fprintf(stderr, "prepare: %d claims failed, %zu prepared\n", prep_errors, plugin.prepared_claims());
      return 1;
    }
    std::printf("liken-dra refresh benchmark: root=%s, %d prepared claims (%zu USB devices), %d rounds\n",
                flags.root.c_str(), n, usb.size(), flags.rounds);
    std::printf("%-58s %8.1f ms  (%.0f claims/s, 100 claims/call)\n", "setup: prepare all claims over the socket",
                Ms(prep_wall), n / absl::ToDoubleSeconds(prep_wall));

    std::vector<double> lstat_ms, read_ms, copy_ms, nochange_ms, change_ms;
    std::vector<int> nochange_written, change_written;
    int wrong_rewrites = 0;
    const int per_round = std::max<int>(1, static_cast<int>(usb.size()) / 100);  // 1% of the USB devices
    int next_usb = 0;

    // Warm-up pass (allocator, dentry cache).
    if (auto w = plugin.RefreshPreparedClaims(inventory); !w.ok() || *w != 0) {
      std::fprintf(stderr, "warm-up refresh: %s\n", w.ok() ? absl::StrCat(*w, " written").c_str()
                                                           : w.status().ToString().c_str());
      rc = 1;
    }

    for (int round = 0; round < flags.rounds; ++round) {
      // (c) baselines: lstat every spec file (what the no-change pass must at least touch) ...
      {
        absl::Time t0 = absl::Now();
        int present = 0;
        for (const auto& r : refs) {
          std::string path = absl::StrCat(o.cdi_root, "/", cdi::ClaimSpecStore::FileName(r.uid));
          struct stat st;
          if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ++present;
        }
        lstat_ms.push_back(Ms(absl::Now() - t0));
        if (present != n) {
          std::fprintf(stderr, "baseline: %d of %d specs present\n", present, n);
          rc = 1;
        }
      }
      // ... open and read every spec file ...
      {
        absl::Time t0 = absl::Now();
        size_t bytes = 0;
        char buffer[16384];
        for (const auto& r : refs) {
          std::string path = absl::StrCat(o.cdi_root, "/", cdi::ClaimSpecStore::FileName(r.uid));
          int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          if (fd < 0) continue;
          ssize_t got;
          while ((got = ::read(fd, buffer, sizeof buffer)) > 0) bytes += static_cast<size_t>(got);
          ::close(fd);
        }
        read_ms.push_back(Ms(absl::Now() - t0));
        if (bytes == 0) rc = 1;
      }
      // ... and copy the inventory (each pass gets one handed in and keeps a copy).
      {
        absl::Time t0 = absl::Now();
        discovery::Inventory copy = inventory;
        copy_ms.push_back(Ms(absl::Now() - t0));
        if (copy.published.size() != static_cast<size_t>(n)) rc = 1;
      }

      // (a) nothing changed.
      {
        absl::Time t0 = absl::Now();
        auto written = plugin.RefreshPreparedClaims(inventory);
        nochange_ms.push_back(Ms(absl::Now() - t0));
        if (!written.ok()) {
          std::fprintf(stderr, "refresh: %s\n", written.status().ToString().c_str());
          return 1;
        }
        nochange_written.push_back(*written);
      }

      // (b) 1% of the USB devices re-enumerate: a different 1% each round.
      {
        std::set<int> moved;
        for (int k = 0; k < per_round; ++k) {
          int i = usb[next_usb];
          next_usb = (next_usb + 1) % static_cast<int>(usb.size());
          ++enumeration[i];
          moved.insert(i);
        }
        inventory = MakeInventory(enumeration);  // built outside the timed pass, as a scan would be
        std::vector<ino_t> before = SpecInodes(o.cdi_root, refs);
        absl::Time t0 = absl::Now();
        auto written = plugin.RefreshPreparedClaims(inventory);
        change_ms.push_back(Ms(absl::Now() - t0));
        if (!written.ok()) {
          std::fprintf(stderr, "refresh: %s\n", written.status().ToString().c_str());
          return 1;
        }
        change_written.push_back(*written);
        std::vector<ino_t> after = SpecInodes(o.cdi_root, refs);
        for (int i = 0; i < n; ++i) {
          bool rewritten = before[i] != after[i];
          if (rewritten != moved.contains(i) || after[i] == 0) ++wrong_rewrites;
        }
      }
    }

    // Same no-change pass with Abseil's mutex deadlock detection off. Abseil built without NDEBUG (the
    // distribution's) keeps it on and records every mutex locked; each claim has its own mutex.
    std::vector<double> nodetect_ms;
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    for (int round = 0; round < flags.rounds; ++round) {
      absl::Time t0 = absl::Now();
      auto written = plugin.RefreshPreparedClaims(inventory);
      nodetect_ms.push_back(Ms(absl::Now() - t0));
      if (!written.ok() || *written != 0) rc = 1;
    }
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kAbort);

    auto print = [](const char* what, const std::vector<double>& ms) {
      Stats s = Summarise(ms);
      std::printf("%-58s p50=%8.3f ms  min=%8.3f ms\n", what, s.p50, s.min);
      return s;
    };
    auto print_written = [&](const char* what, const std::vector<int>& written) {
      int lo = *std::min_element(written.begin(), written.end());
      int hi = *std::max_element(written.begin(), written.end());
      std::printf("%-58s %d..%d per pass\n", what, lo, hi);
    };
    std::string label = absl::StrCat("baseline: lstat ", n, " spec files");
    Stats base_lstat = print(label.c_str(), lstat_ms);
    label = absl::StrCat("baseline: open+read ", n, " spec files");
    Stats base_read = print(label.c_str(), read_ms);
    label = absl::StrCat("baseline: copy the inventory (", n, " devices)");
    print(label.c_str(), copy_ms);
    Stats a = print("(a) refresh, nothing changed", nochange_ms);
    print_written("(a) specs written", nochange_written);
    label = absl::StrCat("(b) refresh, ", per_round, " USB devices re-enumerated (1%)");
    Stats b = print(label.c_str(), change_ms);
    print_written("(b) specs written", change_written);
    std::printf("%-58s %d (spec files rewritten that should not be, or not rewritten that should)\n",
                "(b) wrong rewrites (inode check over all specs)", wrong_rewrites);
    Stats a2 = print("(a') refresh, nothing changed, deadlock detection off", nodetect_ms);
    std::printf("%-58s (a) %.2fx  (b) %.2fx  (a') %.2fx  (p50/p50)\n", "ratio vs lstat baseline", a.p50 / base_lstat.p50,
                b.p50 / base_lstat.p50, a2.p50 / base_lstat.p50);
    std::printf("%-58s (a) %.2fx  (b) %.2fx  (p50/p50)\n", "ratio vs open+read baseline", a.p50 / base_read.p50,
                b.p50 / base_read.p50);
    for (int w : nochange_written) {
      if (w != 0) rc = 1;
    }
    for (int w : change_written) {
      if (w != per_round) rc = 1;
    }
    if (wrong_rewrites > 0) rc = 1;
    if (rc != 0) std::fprintf(stderr, "unexpected counts: see above\n");
  }
  std::filesystem::remove_all(base);
  return rc;
}

}  // namespace
}  // namespace liken::testing

int main(int argc, char** argv) {
  liken::testing::Flags flags;
  if (!liken::testing::ParseFlags(argc, argv, &flags)) return 2;
  return liken::testing::Run(flags);
}
