#include "apis/resource_claim.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace liken::apis {

std::vector<DeviceRequestAllocationResult> ResourceClaim::ResultsFor(const std::string& driver,
                                                                      const std::string& pool) const {
  std::vector<DeviceRequestAllocationResult> out;
  for (const auto& r : results) {
    if (r.driver == driver && r.pool == pool) out.push_back(r);
  }
  return out;
}

absl::StatusOr<ResourceClaim> ParseResourceClaim(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("ResourceClaim is not a JSON object");
  ResourceClaim claim;
  claim.raw = j;
  if (!j.contains("metadata")) return absl::InvalidArgumentError("ResourceClaim has no metadata");
  absl::StatusOr<ObjectMeta> meta = ParseObjectMeta(j["metadata"]);
  if (!meta.ok()) return absl::InvalidArgumentError(absl::StrCat("ResourceClaim ", meta.status().message()));
  claim.metadata = *std::move(meta);
  if (auto a = j["metadata"].find("annotations"); a != j["metadata"].end() && !a->is_null()) {
    if (!a->is_object()) return absl::InvalidArgumentError("ResourceClaim metadata.annotations is not an object");
    if (auto p = a->find(kPodClaimNameAnnotation); p != a->end() && p->is_string()) {
      claim.pod_claim_name = p->get<std::string>();
    }
    if (auto e = a->find(kExtendedResourceClaimAnnotation); e != a->end() && e->is_string()) {
      claim.extended_resource_claim = e->get<std::string>() == "true";
    }
  }
  try {
    const nlohmann::json status = j.value("status", nlohmann::json::object());
    if (!status.is_object()) return absl::InvalidArgumentError("ResourceClaim status is not an object");
    if (status.contains("allocation") && status["allocation"].is_object()) {
      claim.allocated = true;
      const auto& alloc = status["allocation"];
      if (alloc.contains("devices") && alloc["devices"].is_object() && alloc["devices"].contains("results")) {
        const auto& results = alloc["devices"]["results"];
        if (!results.is_array()) return absl::InvalidArgumentError("allocation.devices.results is not a list");
        for (const auto& r : results) {
          if (!r.is_object()) return absl::InvalidArgumentError("allocation result is not an object");
          DeviceRequestAllocationResult res;
          res.request = r.value("request", "");
          res.driver = r.value("driver", "");
          res.pool = r.value("pool", "");
          res.device = r.value("device", "");
          if (r.contains("shareID") && r["shareID"].is_string()) res.share_id = r["shareID"].get<std::string>();
          res.admin_access = r.contains("adminAccess") && r["adminAccess"].is_boolean() && r["adminAccess"].get<bool>();
          claim.results.push_back(std::move(res));
        }
      }
    }
    // Entries are written by drivers, not read by prepare: a malformed list leaves `devices` empty instead of
    // making the claim unusable.
    if (auto devices = ParseAllocatedDeviceStatuses(status.value("devices", nlohmann::json())); devices.ok()) {
      claim.devices = *std::move(devices);
    }
    if (status.contains("reservedFor") && status["reservedFor"].is_array()) {
      for (const auto& r : status["reservedFor"]) {
        claim.reserved_for.push_back(
            {r.value("resource", ""), r.value("name", ""), r.value("uid", "")});
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ResourceClaim has a field of the wrong type: ", e.what()));
  }
  return claim;
}

}  // namespace liken::apis
