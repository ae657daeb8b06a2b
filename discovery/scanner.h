// Reads sysfs and decides, by the rules of the device contract, what this node may give a workload.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "discovery/inventory.h"

namespace liken::discovery {

// How block devices are treated.
enum class StorageRoles {
  kWithholdAll,  // default: every device that delivers a block node belongs to the machine
  kHost,         // read mounts, swaps and holders; offer block devices without a role
};

// Where the scanner reads the machine from. Defaults are the real host paths.
struct ScanOptions {
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
  std::string proc_root = "/proc";
  StorageRoles storage_roles = StorageRoles::kWithholdAll;
  std::string pci_ids_path = "/usr/share/misc/pci.ids";
  std::string modules_root = "/lib/modules";  // modules.alias is read from <modules_root>/<release>/
  std::string kernel_release;                 // empty: uname(2)'s release
  bool match_modules = true;                  // look up modules for unclaimed hardware (the report needs them)
};

// The clock scans are stamped with: monotonic, so a wall-clock step cannot make a fresh scan look stale.
using ScanClock = std::chrono::steady_clock;

// Scans a machine. Implementations hold no state between scans besides cached databases.
class Scanner {
 public:
  virtual ~Scanner() = default;
  // Scans the machine now. Fails only when sysfs cannot be read at all; per-device problems become
  // warnings in the inventory. Thread-safe: concurrent scans are allowed.
  virtual absl::StatusOr<Inventory> Scan() = 0;
};

// Creates the sysfs scanner for `options`. The PCI database and modules.alias are loaded lazily, once.
std::unique_ptr<Scanner> NewSysfsScanner(const ScanOptions& options);

}  // namespace liken::discovery
