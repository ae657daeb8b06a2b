#include "kubelet/claim_resolver.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cdi/claim_spec.h"
#include "cdi/device_metadata.h"
#include "kubelet/device_metadata_writer.h"

namespace liken::kubelet {
namespace {

absl::Status Annotate(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

}  // namespace

ClaimResolver::ClaimResolver(std::string node_name, informers::ClaimLookup* lookup, DeviceCatalog* catalog,
                             bool with_metadata)
    : node_name_(std::move(node_name)), lookup_(lookup), catalog_(catalog), with_metadata_(with_metadata) {}

absl::StatusOr<PreparedClaim> ClaimResolver::Resolve(const ClaimRef& ref) const {
  const std::string what = absl::StrCat("ResourceClaim ", ref.namespace_name, "/", ref.name);
  auto claim = lookup_->Get(ref.namespace_name, ref.name, ref.uid);
  if (!claim.ok()) {
    if (absl::IsNotFound(claim.status())) return absl::NotFoundError(absl::StrCat(what, " not found"));
    return absl::UnavailableError(absl::StrCat("read ", what, ": ", claim.status().message()));
  }
  if (claim->metadata.uid != ref.uid) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " has UID ", claim->metadata.uid, ", not the requested ", ref.uid,
                     ": the claim was deleted and created again"));
  }
  if (!claim->allocated) return absl::FailedPreconditionError(absl::StrCat(what, " is not allocated"));
  auto results = claim->ResultsFor(discovery::kDriverName, node_name_);
  if (results.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(what, " has no device of driver ", discovery::kDriverName,
                                                      " allocated in pool ", node_name_));
  }
  PreparedClaim prepared;
  prepared.ref = ref;
  // From the parsed field: a claim served by the node's claim cache has no raw JSON.
  if (claim->pod_claim_name.has_value() && !claim->pod_claim_name->empty()) {
    prepared.pod_claim_name = *claim->pod_claim_name;
  }
  std::vector<std::string> names;
  for (const auto& r : results) {
    if (!cdi::IsValidDeviceName(cdi::ClaimDeviceName(ref.uid, r.device))) {
      return absl::FailedPreconditionError(absl::StrCat(what, " allocates device '", r.device,
                                                        "', which is not a valid device name"));
    }
    if (std::find(names.begin(), names.end(), r.device) == names.end()) names.push_back(r.device);
    PreparedResult pr;
    pr.request_names = {r.request};
    pr.pool = r.pool;
    pr.device = r.device;
    pr.cdi_device_ids = {cdi::ClaimDeviceId(ref.uid, r.device)};
    pr.share_id = r.share_id;
    pr.admin_access = r.admin_access;
    prepared.results.push_back(std::move(pr));
  }
  auto devices = catalog_->Resolve(names);
  if (!devices.ok()) return Annotate(devices.status(), absl::StrCat(what, ": "));
  for (auto& d : *devices) {
    bool admin_only = true;
    for (const auto& r : results) admin_only = admin_only && (r.device != d.name || r.admin_access);
    prepared.delivered.push_back({d.name, std::move(d.nodes), std::move(d.usb_interfaces), std::move(d.sysfs_path),
                                  std::move(d.attributes), admin_only});
  }
  if (with_metadata_) {
    auto files = MetadataFilesFor(prepared);
    if (!files.ok()) return Annotate(files.status(), absl::StrCat(what, ": device metadata: "));
    AddMetadataCdiIds(*files, &prepared);
  }
  return prepared;
}

std::vector<absl::StatusOr<PreparedClaim>> ClaimResolver::ResolveAll(const std::vector<const ClaimRef*>& refs) const {
  std::vector<absl::StatusOr<PreparedClaim>> out(refs.size(), absl::UnknownError("not resolved"));
  // Claims the node's cache holds cost no read: resolved here, on the calling thread. Only the others (each an
  // API read) are spread over helper threads, so a call whose claims are all cached starts no thread.
  std::vector<size_t> misses;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (lookup_->GetCached(refs[i]->namespace_name, refs[i]->name, refs[i]->uid).ok()) {
      out[i] = Resolve(*refs[i]);
    } else {
      misses.push_back(i);
    }
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t m = next++; m < misses.size(); m = next++) out[misses[m]] = Resolve(*refs[misses[m]]);
  };
  const size_t helpers = std::min(misses.size(), kMaxConcurrentReads) - (misses.empty() ? 0 : 1);
  std::vector<std::jthread> threads;
  threads.reserve(helpers);
  for (size_t t = 0; t < helpers; ++t) threads.emplace_back(work);
  work();           // the calling thread reads too
  threads.clear();  // joins the helpers before `out` is handed back
  return out;
}

}  // namespace liken::kubelet
