#include "apis/device_status.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace liken::apis {
namespace {

std::string StringField(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw std::invalid_argument(where + "." + key + " is not a string");
  return it->get<std::string>();
}

}  // namespace

bool DeviceCondition::SameState(const DeviceCondition& other) const {
  return type == other.type && status == other.status && reason == other.reason && message == other.message;
}

bool AllocatedDeviceStatus::SameDevice(const AllocatedDeviceStatus& other) const {
  return driver == other.driver && pool == other.pool && device == other.device && share_id == other.share_id;
}

bool AllocatedDeviceStatus::SameState(const AllocatedDeviceStatus& other) const {
  if (!SameDevice(other) || data != other.data || conditions.size() != other.conditions.size()) return false;
  for (const auto& c : conditions) {
    bool found = false;
    for (const auto& o : other.conditions) {
      if (c.SameState(o)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

absl::StatusOr<std::vector<AllocatedDeviceStatus>> ParseAllocatedDeviceStatuses(const nlohmann::json& devices) {
  std::vector<AllocatedDeviceStatus> out;
  if (devices.is_null()) return out;
  if (!devices.is_array()) return absl::InvalidArgumentError("status.devices is not a list");
  try {
    for (size_t i = 0; i < devices.size(); ++i) {
      const auto& d = devices[i];
      const std::string where = absl::StrCat("status.devices[", i, "]");
      if (!d.is_object()) return absl::InvalidArgumentError(where + " is not an object");
      AllocatedDeviceStatus entry;
      entry.driver = StringField(d, "driver", where);
      entry.pool = StringField(d, "pool", where);
      entry.device = StringField(d, "device", where);
      if (auto it = d.find("shareID"); it != d.end() && !it->is_null()) {
        if (!it->is_string()) return absl::InvalidArgumentError(where + ".shareID is not a string");
        entry.share_id = it->get<std::string>();
      }
      if (auto it = d.find("conditions"); it != d.end() && !it->is_null()) {
        if (!it->is_array()) return absl::InvalidArgumentError(where + ".conditions is not a list");
        for (const auto& c : *it) {
          if (!c.is_object()) return absl::InvalidArgumentError(where + ".conditions has an entry that is not an object");
          entry.conditions.push_back({StringField(c, "type", where), StringField(c, "status", where),
                                      StringField(c, "reason", where), StringField(c, "message", where),
                                      StringField(c, "lastTransitionTime", where)});
        }
      }
      if (auto it = d.find("data"); it != d.end()) entry.data = *it;
      out.push_back(std::move(entry));
    }
  } catch (const std::invalid_argument& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return out;
}

nlohmann::json ToJson(const AllocatedDeviceStatus& status) {
  nlohmann::json j = {{"driver", status.driver}, {"pool", status.pool}, {"device", status.device}};
  if (status.share_id) j["shareID"] = *status.share_id;
  nlohmann::json conditions = nlohmann::json::array();
  for (const auto& c : status.conditions) {
    conditions.push_back({{"type", c.type},
                          {"status", c.status},
                          {"reason", c.reason},
                          {"message", c.message},
                          {"lastTransitionTime", c.last_transition_time}});
  }
  j["conditions"] = std::move(conditions);
  if (!status.data.is_null()) j["data"] = status.data;
  return j;
}

}  // namespace liken::apis
