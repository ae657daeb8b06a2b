#include "controller/unplugged_devices.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "common/log.h"
#include "discovery/device_identity.h"

namespace liken::controller {
namespace {

// The memory file is a few names and times; more than this is not ours.
constexpr size_t kMaxMemoryBytes = 1 << 20;

// False only when the device's sysfs directory is known and no longer exists.
bool SysfsGone(const nodestate::HeldDevice& device) {
  if (device.sysfs_path.empty()) return false;
  struct stat st;
  return ::stat(device.sysfs_path.c_str(), &st) != 0;
}

// When our taint was added to `name` in the published slices; nullopt when it carries none.
std::optional<absl::Time> PublishedSince(const std::vector<apis::ResourceSlice>& published, const std::string& name) {
  for (const auto& slice : published) {
    for (const auto& device : slice.devices) {
      if (device.name != name) continue;
      for (const auto& taint : device.taints) {
        if (taint.key != kUnpluggedTaintKey) continue;
        absl::Time t;
        std::string error;
        if (absl::ParseTime(absl::RFC3339_full, taint.time_added, &t, &error)) return t;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string TaintTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(absl::ToUnixSeconds(t)), absl::UTCTimeZone());
}

UnpluggedDevices::UnpluggedDevices(Clock* clock, absl::Duration limit, std::string memory_dir)
    : clock_(clock), limit_(limit), memory_dir_(std::move(memory_dir)) {}

std::optional<absl::Time> UnpluggedDevices::NextExpiry() const {
  std::optional<absl::Time> next;
  for (const auto& [name, added] : since_) {
    if (expired_.count(name) > 0) continue;
    if (!next || added + limit_ < *next) next = added + limit_;
  }
  return next;
}

std::map<std::string, absl::Time> UnpluggedDevices::LoadMemory() const {
  std::map<std::string, absl::Time> out;
  if (memory_dir_.empty()) return out;
  const std::string path = absl::StrCat(memory_dir_, "/", kMemoryFile);
  auto text = ReadRegularFile(path, kMaxMemoryBytes);
  if (!text.ok()) {
    if (text.status().code() != absl::StatusCode::kNotFound) {
      LogWarning("cannot read when the unplugged devices' taints were added; they start afresh",
                 {{"path", path}, {"error", text.status().ToString()}});
    }
    return out;
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* devices = nullptr;
  if (j.is_object()) {
    if (auto d = j.find("devices"); d != j.end() && d->is_object()) devices = &*d;
  }
  if (devices == nullptr) {
    LogWarning("the unplugged devices' taint file is not what this driver writes; it starts afresh", {{"path", path}});
    return out;
  }
  for (const auto& [name, value] : devices->items()) {
    absl::Time t;
    std::string error;
    if (value.is_string() && apis::IsDnsLabel(name) &&
        absl::ParseTime(absl::RFC3339_full, value.get<std::string>(), &t, &error)) {
      out[name] = t;
    }
  }
  return out;
}

void UnpluggedDevices::SaveMemory(const std::map<std::string, absl::Time>& since) {
  if (memory_dir_.empty()) return;
  nlohmann::json devices = nlohmann::json::object();
  for (const auto& [name, added] : since) devices[name] = TaintTime(added);
  // Unsynced: a power loss is a reboot, after which no claim holds the devices any more.
  absl::Status s = WriteFileAtomically(memory_dir_, kMemoryFile, nlohmann::json{{"devices", devices}}.dump() + "\n",
                                       Durability::kUnsynced);
  if (!s.ok()) {
    LogWarning("cannot remember when the unplugged devices' taints were added", {{"error", s.ToString()}});
    return;
  }
  remembered_ = since;
}

std::vector<apis::SliceDevice> UnpluggedDevices::Tainted(const discovery::Inventory& inventory,
                                                         const std::vector<nodestate::HeldDevice>& held,
                                                         const PublishedFunc& published) {
  const absl::Time now = clock_->Now();
  if (!loaded_) {
    remembered_ = LoadMemory();
    loaded_ = true;
  }
  std::optional<std::vector<apis::ResourceSlice>> slices;  // read once, when needed
  std::map<std::string, absl::Time> since;
  std::set<std::string> expired;
  std::vector<apis::SliceDevice> out;
  for (const nodestate::HeldDevice& h : held) {
    // Another unit in its port is not the claimed device come back (discovery::SameUnit): it stays gone.
    const discovery::PublishedDevice* found = inventory.Find(h.name);
    const bool other_unit =
        found != nullptr && !discovery::SameUnit(discovery::IdentityOf(h.attributes), discovery::IdentityOf(found->attributes));
    if (h.admin_access_only || (found != nullptr && !other_unit) || (found == nullptr && !SysfsGone(h))) continue;
    absl::Time added;
    if (auto it = since_.find(h.name); it != since_.end()) {
      added = it->second;
    } else if (auto r = remembered_.find(h.name); r != remembered_.end()) {
      added = r->second;  // from before a restart: the same timeAdded, and an expired device stays out
    } else {
      if (!slices.has_value()) slices = published ? published() : std::vector<apis::ResourceSlice>{};
      added = PublishedSince(*slices, h.name).value_or(absl::FromUnixSeconds(absl::ToUnixSeconds(now)));
    }
    since[h.name] = added;
    if (now - added >= limit_) {
      if (expired_.count(h.name) == 0) {
        LogWarning("a claimed device that went away leaves the slice: its taint's time limit ran out",
                   {{"device", h.name}, {"tainted_since", TaintTime(added)}, {"limit", absl::FormatDuration(limit_)}});
      }
      expired.insert(h.name);
      continue;
    }
    if (since_.count(h.name) == 0) {
      LogInfo("a claimed device went away: published with a NoExecute taint until it comes back or its claims end",
              {{"device", h.name}, {"taint", kUnpluggedTaintKey}, {"time_added", TaintTime(added)}});
    }
    apis::SliceDevice device;
    device.name = h.name;
    device.attributes = h.attributes;
    device.taints.push_back({kUnpluggedTaintKey, kUnpluggedTaintValue, apis::kTaintEffectNoExecute, TaintTime(added)});
    out.push_back(std::move(device));
  }
  for (const auto& [name, added] : since_) {
    if (since.count(name) > 0 || expired_.count(name) > 0) continue;
    LogInfo("a tainted device is no longer published tainted: it came back, or no prepared claim holds it",
            {{"device", name}, {"present", inventory.Find(name) != nullptr ? "true" : "false"}});
  }
  since_ = std::move(since);
  expired_ = std::move(expired);
  if (since_ != remembered_) SaveMemory(since_);
  tainted_ = out.size();
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace liken::controller
