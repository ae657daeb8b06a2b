// Benchmark helper: registers with a running driver as the kubelet does (its registration socket under
// <kubelet-root>/plugins_registry) and prepares the listed claims over its DRA socket (v1), in batches.
// Used by test/controller/daemon_rss_benchmark.sh to put the real daemon in a state with many prepared claims.
//
//   liken_prepare_claims --kubelet-root DIR --claims FILE [--batch N] [--unprepare]
//   liken_prepare_claims --kubelet-root DIR --register-only [--wait-seconds S]
//
// FILE has one claim per line: "<namespace> <name> <uid>". Prints how many claims were prepared (or
// unprepared) and the first errors; exits 1 when any claim failed. --register-only registers and exits;
// with --wait-seconds it retries every 2 ms until the driver's registration socket answers (as the kubelet's
// plugin watcher notices a new socket at once), then prints "registered at <unix ms>".
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "test/kubelet/test_kubelet.h"

namespace {

int Run(int argc, char** argv) {
  std::string kubelet_root, claims_file;
  int batch = 100;
  bool unprepare = false;
  bool register_only = false;
  double wait_seconds = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--kubelet-root" && i + 1 < argc) {
      kubelet_root = argv[++i];
    } else if (a == "--claims" && i + 1 < argc) {
      claims_file = argv[++i];
    } else if (a == "--batch" && i + 1 < argc) {
      batch = std::atoi(argv[++i]);
    } else if (a == "--unprepare") {
      unprepare = true;
    } else if (a == "--register-only") {
      register_only = true;
    } else if (a == "--wait-seconds" && i + 1 < argc) {
      wait_seconds = std::atof(argv[++i]);
    } else {
      kubelet_root.clear();
      break;
    }
  }
  if (kubelet_root.empty() || (claims_file.empty() && !register_only) || batch <= 0) {
    std::fprintf(stderr,
                 "usage: %s --kubelet-root DIR --claims FILE [--batch N] [--unprepare]\n"
                 "       %s --kubelet-root DIR --register-only [--wait-seconds S]\n",
                 argv[0], argv[0]);
    return 2;
  }
  if (register_only) {
    const absl::Time deadline = absl::Now() + absl::Seconds(wait_seconds);
    while (true) {
      auto kubelet = liken::testing::TestKubelet::Register(kubelet_root, liken::testing::DraVersion::kV1);
      if (kubelet.ok()) {
        std::printf("registered at %lld\n", static_cast<long long>(absl::ToUnixMillis(absl::Now())));
        return 0;
      }
      if (absl::Now() >= deadline) {
        std::fprintf(stderr, "register: %s\n", kubelet.status().ToString().c_str());
        return 1;
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
  }
  std::vector<liken::kubelet::ClaimRef> refs;
  std::ifstream in(claims_file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    liken::kubelet::ClaimRef ref;
    if (fields >> ref.namespace_name >> ref.name >> ref.uid) refs.push_back(ref);
  }
  if (refs.empty()) {
    std::fprintf(stderr, "no claims in %s\n", claims_file.c_str());
    return 2;
  }
  auto kubelet = liken::testing::TestKubelet::Register(kubelet_root, liken::testing::DraVersion::kV1);
  if (!kubelet.ok()) {
    std::fprintf(stderr, "register: %s\n", kubelet.status().ToString().c_str());
    return 1;
  }
  int ok = 0, failed = 0;
  absl::Time start = absl::Now();
  auto report = [&failed](const std::string& uid, const std::string& error) {
    if (error.empty()) return false;
    if (++failed <= 5) std::fprintf(stderr, "claim %s: %s\n", uid.c_str(), error.c_str());
    return true;
  };
  for (size_t i = 0; i < refs.size(); i += static_cast<size_t>(batch)) {
    std::vector<liken::kubelet::ClaimRef> part(refs.begin() + i,
                                               refs.begin() + std::min(refs.size(), i + static_cast<size_t>(batch)));
    if (unprepare) {
      auto r = (*kubelet)->Unprepare(part);
      for (const auto& ref : part) {
        std::string error = !r.ok() ? r.status().ToString() : r->count(ref.uid) ? r->at(ref.uid) : "no answer";
        if (!report(ref.uid, error)) ++ok;
      }
    } else {
      auto r = (*kubelet)->Prepare(part);
      for (const auto& ref : part) {
        std::string error = !r.ok()              ? r.status().ToString()
                            : r->count(ref.uid) ? r->at(ref.uid).error
                                                : "no answer";
        if (!report(ref.uid, error)) ++ok;
      }
    }
  }
  std::printf("%s %d claims, %d failed, in %.0f ms\n", unprepare ? "unprepared" : "prepared", ok, failed,
              absl::ToDoubleMilliseconds(absl::Now() - start));
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
