// Benchmark: NodePrepareResources / NodeUnprepareResources over the unix socket, claims already cached.
// Prints p50/p99 latency for one claim per call, for 100 concurrent callers, and prepared claims per second.
//
//   liken_prepare_benchmark [--root DIR] [--calls N] [--callers N] [--calls-per-caller N]
//
// DIR (default /dev/shm, tmpfs) holds the kubelet root, the CDI directory and the checkpoint.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
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
  int calls = 2000;
  int callers = 100;
  int calls_per_caller = 20;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--root" && (v = value())) {
      f->root = v;
    } else if (a == "--calls" && (v = value())) {
      f->calls = std::atoi(v);
    } else if (a == "--callers" && (v = value())) {
      f->callers = std::atoi(v);
    } else if (a == "--calls-per-caller" && (v = value())) {
      f->calls_per_caller = std::atoi(v);
    } else {
      std::fprintf(stderr, "usage: %s [--root DIR] [--calls N] [--callers N] [--calls-per-caller N]\n", argv[0]);
      return false;
    }
  }
  return f->calls > 0 && f->callers > 0 && f->calls_per_caller > 0;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t idx = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size())));
  return v[idx];
}

void Print(const char* what, const std::vector<double>& ms) {
  std::printf("%-52s n=%-6zu p50=%7.3f ms  p99=%7.3f ms  max=%7.3f ms\n", what, ms.size(), Percentile(ms, 50),
              Percentile(ms, 99), ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

int Run(const Flags& flags) {
  SetLogLevel(LogLevel::kError);
  std::string base = absl::StrCat(flags.root, "/liken-bench-", ::getpid());
  std::filesystem::create_directories(base);
  std::ofstream(base + "/boot_id") << "bench-boot\n";

  const int claims = std::max(flags.calls, flags.callers * 1);
  auto devices = NumberedDevices(claims);
  FakeScanner scanner;
  scanner.Set(InventoryOf(devices));
  FakeClaimLookup lookup;
  std::vector<kubelet::ClaimRef> refs;
  for (int i = 0; i < claims; ++i) {
    std::string uid = absl::StrCat("b", i, "-0000-4000-8000-000000000000");
    std::string name = absl::StrCat("claim-", i);
    lookup.Add(ClaimJson("bench", name, uid, kNode, {{"req", devices[i].name}}));
    refs.push_back({"bench", uid, name});
  }

  kubelet::KubeletPluginOptions o;
  o.node_name = kNode;
  o.kubelet_root = base + "/kubelet";
  o.cdi_root = base + "/cdi";
  o.sysfs_root = base + "/sys";
  o.boot_id_path = base + "/boot_id";
  int rc = 0;
  {
    kubelet::KubeletPlugin plugin(o, &scanner, &lookup, nullptr);
    if (auto s = plugin.Start(); !s.ok()) {
      std::fprintf(stderr, "start: %s\n", s.ToString().c_str());
      return 1;
    }
    plugin.UpdateInventory(InventoryOf(devices));
    auto kubelet = TestKubelet::Register(o.kubelet_root, DraVersion::kV1);
    if (!kubelet.ok()) {
      std::fprintf(stderr, "register: %s\n", kubelet.status().ToString().c_str());
      return 1;
    }
    TestKubelet& k = **kubelet;
    std::atomic<int> errors{0};
    auto prepare = [&](const kubelet::ClaimRef& ref) {
      auto r = k.Prepare({ref});
      if (!r.ok() || r->at(ref.uid).error != "") errors++;
    };
    auto unprepare = [&](const kubelet::ClaimRef& ref) {
      auto r = k.Unprepare({ref});
      if (!r.ok() || r->at(ref.uid) != "") errors++;
    };

    // Warm-up: connections, allocator, page cache.
    for (int i = 0; i < 50; ++i) {
      prepare(refs[i % claims]);
      unprepare(refs[i % claims]);
    }

    std::printf("liken-dra kubelet plugin benchmark: root=%s (claims cached, v1 over a unix socket)\n",
                flags.root.c_str());

    // 1. One claim per call, one caller.
    std::vector<double> prep_ms, again_ms, unprep_ms;
    for (int i = 0; i < flags.calls; ++i) {
      const auto& ref = refs[i % claims];
      absl::Time t0 = absl::Now();
      prepare(ref);
      absl::Time t1 = absl::Now();
      prepare(ref);  // idempotent repeat
      absl::Time t2 = absl::Now();
      unprepare(ref);
      absl::Time t3 = absl::Now();
      prep_ms.push_back(Ms(t1 - t0));
      again_ms.push_back(Ms(t2 - t1));
      unprep_ms.push_back(Ms(t3 - t2));
    }
    Print("prepare, 1 claim/call, 1 caller", prep_ms);
    Print("prepare again (already prepared), 1 caller", again_ms);
    Print("unprepare, 1 claim/call, 1 caller", unprep_ms);

    // 2. Concurrent callers, each preparing and unpreparing its own claims.
    std::vector<std::vector<double>> per_caller_prep(flags.callers), per_caller_unprep(flags.callers);
    std::vector<std::thread> threads;
    absl::Time start = absl::Now();
    for (int c = 0; c < flags.callers; ++c) {
      threads.emplace_back([&, c] {
        for (int i = 0; i < flags.calls_per_caller; ++i) {
          const auto& ref = refs[(c + i * flags.callers) % claims];
          absl::Time t0 = absl::Now();
          prepare(ref);
          absl::Time t1 = absl::Now();
          unprepare(ref);
          absl::Time t2 = absl::Now();
          per_caller_prep[c].push_back(Ms(t1 - t0));
          per_caller_unprep[c].push_back(Ms(t2 - t1));
        }
      });
    }
    for (auto& t : threads) t.join();
    absl::Duration wall = absl::Now() - start;
    std::vector<double> cprep, cunprep;
    for (int c = 0; c < flags.callers; ++c) {
      cprep.insert(cprep.end(), per_caller_prep[c].begin(), per_caller_prep[c].end());
      cunprep.insert(cunprep.end(), per_caller_unprep[c].begin(), per_caller_unprep[c].end());
    }
    std::string label = absl::StrCat("prepare, 1 claim/call, ", flags.callers, " concurrent callers");
    Print(label.c_str(), cprep);
    label = absl::StrCat("unprepare, 1 claim/call, ", flags.callers, " concurrent callers");
    Print(label.c_str(), cunprep);
    std::printf("%-52s %.0f claims/s (each prepared and unprepared)\n", "throughput, concurrent callers",
                static_cast<double>(cprep.size()) / absl::ToDoubleSeconds(wall));

    // 3. 100 claims in one call.
    std::vector<kubelet::ClaimRef> batch(refs.begin(), refs.begin() + std::min(100, claims));
    std::vector<double> batch_ms;
    absl::Duration batch_total;
    for (int i = 0; i < 20; ++i) {
      absl::Time t0 = absl::Now();
      auto r = k.Prepare(batch);
      absl::Duration d = absl::Now() - t0;
      batch_total += d;
      batch_ms.push_back(Ms(d));
      if (!r.ok()) errors++;
      if (!k.Unprepare(batch).ok()) errors++;
    }
    Print("prepare, 100 claims/call", batch_ms);
    std::printf("%-52s %.0f claims/s\n", "throughput, 100 claims/call",
                20.0 * static_cast<double>(batch.size()) / absl::ToDoubleSeconds(batch_total));
    if (errors.load() > 0) {
      std::fprintf(stderr, "%d calls failed\n", errors.load());
      rc = 1;
    }
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
