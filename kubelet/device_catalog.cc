#include "kubelet/device_catalog.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace liken::kubelet {
namespace {

// False when the device's sysfs directory is known and no longer exists (unplugged).
bool StillInSysfs(const discovery::PublishedDevice& device) {
  if (device.sysfs_path.empty()) return true;
  struct stat st;
  return ::stat(device.sysfs_path.c_str(), &st) == 0;
}

}  // namespace

const discovery::PublishedDevice* InventorySnapshot::Find(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : &inventory.published[it->second];
}

DeviceCatalog::DeviceCatalog(discovery::Scanner* scanner)
    : scanner_(scanner), current_(std::make_shared<InventorySnapshot>()) {}

bool DeviceCatalog::Update(discovery::Inventory inventory, ScanClock::time_point scan_started) {
  auto snap = std::make_shared<InventorySnapshot>();
  snap->inventory = std::move(inventory);
  for (size_t i = 0; i < snap->inventory.published.size(); ++i) {
    snap->by_name.emplace(snap->inventory.published[i].name, i);
  }
  snap->scan_started = scan_started;
  absl::MutexLock lock(&mu_);
  if (scan_started < current_->scan_started) return false;
  snap->generation = next_generation_++;
  current_ = std::move(snap);
  return true;
}

std::shared_ptr<const InventorySnapshot> DeviceCatalog::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

absl::StatusOr<std::shared_ptr<const InventorySnapshot>> DeviceCatalog::Rescan(uint64_t seen) {
  absl::MutexLock scan_lock(&scan_mu_);
  auto snap = Current();
  if (snap->generation > seen) return snap;
  const ScanClock::time_point started = ScanClock::now();
  auto inventory = scanner_->Scan();
  if (!inventory.ok()) {
    return absl::UnavailableError(absl::StrCat("rescanning devices failed: ", inventory.status().message()));
  }
  Update(std::move(*inventory), started);
  return Current();
}

absl::StatusOr<std::vector<discovery::PublishedDevice>> DeviceCatalog::Resolve(const std::vector<std::string>& names) {
  auto snap = Current();
  // A device whose sysfs directory is gone counts as missing in any snapshot, also a rescanned one (it may
  // have been unplugged since that scan).
  auto missing_from = [&names](const InventorySnapshot& s) {
    std::vector<std::string> missing;
    for (const auto& name : names) {
      const auto* d = s.Find(name);
      if (d == nullptr || !StillInSysfs(*d)) missing.push_back(name);
    }
    return missing;
  };
  std::vector<std::string> missing = missing_from(*snap);
  if (!missing.empty() && scanner_ != nullptr) {
    auto rescanned = Rescan(snap->generation);
    if (!rescanned.ok()) return rescanned.status();
    snap = *rescanned;
    missing = missing_from(*snap);
  }
  if (!missing.empty()) {
    return absl::NotFoundError(absl::StrCat(
        missing.size() == 1 ? "device " : "devices ", absl::StrJoin(missing, ", "),
        missing.size() == 1 ? " is" : " are",
        " not present on this node (unplugged or no longer published since the claim was allocated)"));
  }
  std::vector<discovery::PublishedDevice> out;
  out.reserve(names.size());
  for (const auto& name : names) out.push_back(*snap->Find(name));
  return out;
}

uint64_t DeviceCatalog::AwaitNewerThan(uint64_t generation, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || current_->generation > generation;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return current_->generation;
}

void DeviceCatalog::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

bool DeviceCatalog::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

}  // namespace liken::kubelet
