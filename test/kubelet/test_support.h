// Small helpers for kubelet plugin tests: status assertions, temporary directories, counting observer.
#pragma once

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nodestate/plugin_observer.h"

namespace liken::testing {

inline const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

#define LIKEN_ASSERT_OK(expr)                                     \
  do {                                                            \
    const auto& liken_status_ = (expr);                           \
    ASSERT_TRUE(::liken::testing::StatusOf(liken_status_).ok())   \
        << ::liken::testing::StatusOf(liken_status_).ToString();  \
  } while (0)

// A fresh directory under /tmp (short, so socket paths fit), removed by the destructor.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/liken-test-XXXXXX";
    char* made = ::mkdtemp(pattern);
    if (made == nullptr) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Counts what the plugin reports. Thread-safe.
class CountingObserver : public nodestate::PluginObserver {
 public:
  void OnPrepare(const absl::Status& result, absl::Duration) override { (result.ok() ? prepared : prepare_errors)++; }
  void OnUnprepare(const absl::Status& result, absl::Duration) override {
    (result.ok() ? unprepared : unprepare_errors)++;
  }
  void OnRebindFailure(absl::string_view) override { rebind_failures++; }
  void OnPreparedClaims(size_t count) override { gauge = count; }
  void OnRegistration(bool ok, absl::string_view) override { registrations += ok ? 1 : 0; }
  void OnSpecsRefreshed(int count) override { refreshed += count; }
  void OnUnhealthyClaimedDevices(size_t count) override { unhealthy = count; }

  std::atomic<int> prepared{0}, prepare_errors{0}, unprepared{0}, unprepare_errors{0}, rebind_failures{0};
  std::atomic<size_t> gauge{0}, unhealthy{0};
  std::atomic<int> registrations{0}, refreshed{0};
};

}  // namespace liken::testing
