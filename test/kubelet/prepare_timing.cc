// Benchmark helper for test/kubelet/cluster_prepare_benchmark.sh: times NodePrepareResources and
// NodeUnprepareResources against a running driver (any DRA driver: it registers as the kubelet does through the
// only `*-reg.sock` under <kubelet-root>/plugins_registry and speaks v1), and measures the floors of a prepare's
// durability on a directory.
//
//   liken_prepare_timing calls --kubelet-root DIR --claims FILE --mode single|batch|prepare|unprepare
//     single: one claim per call, each claim of FILE in turn; prints p50/p99; then unprepares them one per call.
//     batch:  one call with every claim of FILE, then one unprepare call with all of them.
//     prepare / unprepare: only that one call with every claim of FILE (the claims stay prepared in between).
//   liken_prepare_timing floors --dir DIR [--files N]
//     the cost on DIR's filesystem of replacing N small files (1 KiB) one by one with temp+fsync+rename+fsync of
//     the directory (the per-file durable write), of the same N as one batch (WriteFilesAtomically:
//     concurrent fsyncs, one directory fsync), and, for comparison, of N unsynced writes then one syncfs(2).
//
// FILE has one claim per line: "<namespace> <name> <uid>". Output lines are "key value" pairs for the script.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/atomic_file.h"
#include "test/kubelet/test_kubelet.h"

namespace {

using liken::kubelet::ClaimRef;

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Counts the claims of an answer that failed, printing the first few.
template <typename Answer>
int Failures(const absl::StatusOr<Answer>& answer, const std::vector<ClaimRef>& refs) {
  if (!answer.ok()) {
    std::fprintf(stderr, "call failed: %s\n", answer.status().ToString().c_str());
    return static_cast<int>(refs.size());
  }
  int failed = 0;
  for (const auto& ref : refs) {
    auto it = answer->find(ref.uid);
    std::string error = it == answer->end() ? "no answer" : [&] {
      if constexpr (std::is_same_v<typename Answer::mapped_type, std::string>) {
        return it->second;
      } else {
        return it->second.error;
      }
    }();
    if (!error.empty() && ++failed <= 3) std::fprintf(stderr, "claim %s: %s\n", ref.uid.c_str(), error.c_str());
  }
  return failed;
}

int Calls(const std::string& kubelet_root, const std::string& claims_file, const std::string& mode) {
  std::vector<ClaimRef> refs;
  std::ifstream in(claims_file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ClaimRef ref;
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
  int failed = 0;
  if (mode == "single") {
    std::vector<double> prepare, unprepare;
    for (const auto& ref : refs) {
      absl::Time t = absl::Now();
      auto r = (*kubelet)->Prepare({ref});
      prepare.push_back(Ms(absl::Now() - t));
      failed += Failures(r, {ref});
    }
    for (const auto& ref : refs) {
      absl::Time t = absl::Now();
      auto r = (*kubelet)->Unprepare({ref});
      unprepare.push_back(Ms(absl::Now() - t));
      failed += Failures(r, {ref});
    }
    std::printf("prepare_p50_ms %.2f\nprepare_p99_ms %.2f\nunprepare_p50_ms %.2f\nclaims %zu\nfailed %d\n",
                Percentile(prepare, 0.5), Percentile(prepare, 0.99), Percentile(unprepare, 0.5), refs.size(), failed);
  } else if (mode == "batch") {
    absl::Time t = absl::Now();
    auto r = (*kubelet)->Prepare(refs);
    const double prepare = Ms(absl::Now() - t);
    failed += Failures(r, refs);
    t = absl::Now();
    auto u = (*kubelet)->Unprepare(refs);
    const double unprepare = Ms(absl::Now() - t);
    failed += Failures(u, refs);
    std::printf("batch_prepare_ms %.1f\nbatch_unprepare_ms %.1f\nclaims %zu\nfailed %d\n", prepare, unprepare,
                refs.size(), failed);
  } else if (mode == "prepare" || mode == "unprepare") {  // one call, the claims stay prepared (or are released)
    absl::Time t = absl::Now();
    if (mode == "prepare") {
      failed += Failures((*kubelet)->Prepare(refs), refs);
    } else {
      failed += Failures((*kubelet)->Unprepare(refs), refs);
    }
    const double ms = Ms(absl::Now() - t);
    std::printf("%s_ms %.1f\nclaims %zu\nfailed %d\n", mode.c_str(), ms, refs.size(), failed);
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  return failed == 0 ? 0 : 1;
}

int Floors(const std::string& dir, int files) {
  const std::string content(1024, 'x');
  std::vector<double> each;
  absl::Time start = absl::Now();
  for (int i = 0; i < files; ++i) {
    absl::Time t = absl::Now();
    if (auto s = liken::WriteFileAtomically(dir, absl::StrCat("floor-", i, ".json"), content); !s.ok()) {
      std::fprintf(stderr, "write: %s\n", s.ToString().c_str());
      return 1;
    }
    each.push_back(Ms(absl::Now() - t));
  }
  const double one_by_one = Ms(absl::Now() - start);
  std::vector<liken::FileWrite> batch;
  for (int i = 0; i < files; ++i) batch.push_back({absl::StrCat("floor-", i, ".json"), content});
  start = absl::Now();
  for (const auto& s : liken::WriteFilesAtomically(dir, batch)) {
    if (!s.ok()) {
      std::fprintf(stderr, "batch write: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  const double batched = Ms(absl::Now() - start);
  start = absl::Now();
  for (const auto& f : batch) {
    if (auto s = liken::WriteFileAtomically(dir, f.name, f.content, liken::Durability::kUnsynced); !s.ok()) return 1;
  }
  const double unsynced = Ms(absl::Now() - start);
  start = absl::Now();  // the batch as one syncfs would make it durable (flushing every other writer's data too)
  for (const auto& f : batch) {
    if (auto s = liken::WriteFileAtomically(dir, f.name, f.content, liken::Durability::kUnsynced); !s.ok()) return 1;
  }
  {
    int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0 || ::syncfs(dirfd) != 0 || ::fsync(dirfd) != 0) {
      std::fprintf(stderr, "syncfs %s failed\n", dir.c_str());
      if (dirfd >= 0) ::close(dirfd);
      return 1;
    }
    ::close(dirfd);
  }
  const double syncfs_batched = Ms(absl::Now() - start);
  for (const auto& f : batch) ::unlink(absl::StrCat(dir, "/", f.name).c_str());
  std::printf("durable_write_p50_ms %.3f\nfiles %d\none_by_one_ms %.1f\nbatched_ms %.1f\nunsynced_ms %.1f\n"
              "syncfs_batched_ms %.1f\n",
              Percentile(each, 0.5), files, one_by_one, batched, unsynced, syncfs_batched);
  return 0;
}

int Run(int argc, char** argv) {
  std::string command = argc > 1 ? argv[1] : "", kubelet_root, claims, mode, dir;
  int files = 100;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--kubelet-root") kubelet_root = v;
    else if (a == "--claims") claims = v;
    else if (a == "--mode") mode = v;
    else if (a == "--dir") dir = v;
    else if (a == "--files") files = std::atoi(v.c_str());
  }
  if (command == "calls" && !kubelet_root.empty() && !claims.empty()) return Calls(kubelet_root, claims, mode);
  if (command == "floors" && !dir.empty() && files > 0) return Floors(dir, files);
  std::fprintf(stderr,
               "usage: %s calls --kubelet-root DIR --claims FILE --mode single|batch|prepare|unprepare\n"
               "       %s floors --dir DIR [--files N]\n",
               argv[0], argv[0]);
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
