// A pod follows its device (--taint-unplugged-devices): a device a prepared claim holds that left the node stays
// in the node's slice for a bounded time, with a NoExecute taint, so the kube-controller-manager evicts the pods
// whose claims hold it (unless a claim tolerates the taint) and the scheduler offers it to no new claim.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "apis/resource_slice.h"
#include "common/clock.h"
#include "nodestate/node_devices.h"
#include "discovery/inventory.h"

namespace liken::controller {

// The taint of a claimed device that went away: key, value (the reason) and effect; timeAdded says when.
inline constexpr char kUnpluggedTaintKey[] = "liken.sh/unplugged";
inline constexpr char kUnpluggedTaintValue[] = "device-gone";

// How long a claimed device that went away stays published with its taint at most, when a prepared claim still
// holds it then (a claim that tolerates the taint without a time limit).
inline constexpr absl::Duration kDefaultUnpluggedTaintLimit = absl::Hours(1);

// Decides, at each node pass, which devices are published tainted although the scan no longer finds them: those a
// prepared claim holds (not for admin access only) whose sysfs directory is gone (unplugged, or removed from the
// bus). A device whose directory is still there (its driver unbound, or a libusb program in the pod detached the
// kernel driver, as the contract describes) is not tainted: it leaves the slice as before. A name the scan finds
// holding another unit than the claim's (discovery::SameUnit: vendor, product, serial) counts as gone: the claimed
// device is tainted, and the caller publishes it in place of the other unit. A device stays tainted
// until it is found again, no prepared claim holds it any more, or `limit` after its taint was added; then it
// leaves the slice. NextExpiry says when the next limit runs out, for the pass that ends it (the node's loop asks for
// one then, not at the next resync). With a memory directory it remembers when each such device's taint was added
// (the expired ones too) in a file there, so a restarted daemon neither gives a tainted device a new timeAdded nor
// publishes an expired one again. One pass at a time (the node's worker thread): not thread-safe.
class UnpluggedDevices {
 public:
  // The file in the memory directory: {"devices": {"<name>": "<timeAdded, RFC 3339>", ...}}.
  static constexpr char kMemoryFile[] = "unplugged-taints.json";

  // `clock` must outlive this object. `memory_dir` (empty: none, nothing survives a restart) holds kMemoryFile; it
  // is read at the first Tainted call and replaced (atomically) whenever the set of devices or their times change.
  UnpluggedDevices(Clock* clock, absl::Duration limit = kDefaultUnpluggedTaintLimit, std::string memory_dir = "");

  // The devices to publish tainted now, sorted by name: each with the attributes it was prepared with, no sharing
  // (its allocation already holds it) and one taint {kUnpluggedTaintKey, kUnpluggedTaintValue, NoExecute, time}.
  // `published` gives the node's slices as the server has them (called at most once, only for a device gone
  // since the last call): a taint found there keeps its timeAdded (a restarted daemon does not restart a claim's
  // tolerationSeconds). Logs each device tainted, each no longer tainted, and each whose limit ran out.
  // Not thread-safe.
  using PublishedFunc = std::function<std::vector<apis::ResourceSlice>()>;
  std::vector<apis::SliceDevice> Tainted(const discovery::Inventory& inventory, const std::vector<nodestate::HeldDevice>& held,
                                         const PublishedFunc& published);

  // How many devices are published tainted after the last Tainted call. Not thread-safe.
  size_t tainted() const { return tainted_; }

  // When the first taint published by the last Tainted call runs out of time (its timeAdded + the limit): the pass
  // then takes the device out of the slice. nullopt when none is published tainted. Not thread-safe.
  std::optional<absl::Time> NextExpiry() const;

 private:
  // The memory file's devices and times; empty when there is none or it cannot be read (logged).
  std::map<std::string, absl::Time> LoadMemory() const;
  // Replaces the memory file with `since` (logged when it fails: the next pass tries again).
  void SaveMemory(const std::map<std::string, absl::Time>& since);

  Clock* const clock_;
  const absl::Duration limit_;
  const std::string memory_dir_;
  bool loaded_ = false;                         // the memory file was read (at the first Tainted call)
  std::map<std::string, absl::Time> remembered_;  // what the memory file holds
  std::map<std::string, absl::Time> since_;  // gone and held: when its taint was added (also once expired)
  std::set<std::string> expired_;            // gone and held, past the limit (logged once)
  size_t tainted_ = 0;
};

// The RFC 3339 form of `t` the API server stores (seconds, UTC: "2026-12-04T19:40:58Z"). Thread-safe.
std::string TaintTime(absl::Time t);

}  // namespace liken::controller
