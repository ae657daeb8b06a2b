#include "controller/node_reconciler.h"

#include <malloc.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "discovery/device_identity.h"
#include "common/rate_limiter.h"
#include "discovery/inventory.h"
#include "discovery/slice_builder.h"
#include "informers/store.h"

namespace liken::controller {
namespace {

// True when `a` and `b` publish the same: the same slices, by name, with the same devices.
bool SameSlices(const std::vector<apis::ResourceSlice>& a, const std::vector<apis::ResourceSlice>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].metadata.name != b[i].metadata.name || a[i].devices.size() != b[i].devices.size()) return false;
    for (size_t j = 0; j < a[i].devices.size(); ++j) {
      if (!a[i].devices[j].SameContent(b[i].devices[j])) return false;
    }
  }
  return true;
}

// `inventory`, less the devices named in `replaced`.
discovery::Inventory WithoutNames(const discovery::Inventory& inventory, const std::vector<apis::SliceDevice>& replaced) {
  discovery::Inventory out = inventory;
  std::erase_if(out.published, [&](const discovery::PublishedDevice& d) {
    return std::any_of(replaced.begin(), replaced.end(), [&](const apis::SliceDevice& r) { return r.name == d.name; });
  });
  return out;
}

}  // namespace

informers::InformerOptions NodeSliceInformerOptions(const std::string& node_name) {
  informers::InformerOptions options;
  options.resource = "resourceslices";
  options.path = informers::ResourceSlicesPath();
  options.field_selector = absl::StrCat("spec.nodeName=", node_name, ",spec.driver=", discovery::kDriverName);
  options.transform = informers::StripManagedFields;
  // Read once per publishing pass: kept as CBOR (0.75 MB as trees for a 150-device host, 88 kB as CBOR).
  options.store_encoding = informers::StoreEncoding::kCbor;
  return options;
}

NodeReconciler::NodeReconciler(NodeReconcilerOptions options, informers::KubeClient* client, Clock* clock,
                               discovery::Scanner* scanner, nodestate::NodeDevices* devices,
                               std::unique_ptr<UeventSource> uevents, Metrics* metrics, std::stop_token shutdown)
    : options_(std::move(options)),
      clock_(clock),
      scanner_(scanner),
      devices_(devices),
      metrics_(metrics),
      shutdown_(std::move(shutdown)),
      queue_(clock, NewControllerRateLimiter(clock, absl::Milliseconds(5), absl::Seconds(30), 10, 100), metrics),
      slices_(client, clock, NodeSliceInformerOptions(options_.node_name), &loop_, metrics),
      sync_(options_.node_name, discovery::kDriverName, client, slices_.store(), metrics),
      unplugged_(clock, options_.unplugged_taint_limit, options_.unplugged_memory_dir),
      damper_(clock, options_.flap_damping),
      budget_(clock, options_.slice_write_budget),
      loop_(&queue_, options_.resync_period, [this] { return RunPass(); }),
      coalescer_(clock, options_.uevent_quiet, options_.uevent_max_delay, [this] { loop_.Enqueue(); }),
      uevents_(uevents != nullptr ? std::make_unique<UeventListener>(std::move(uevents), &coalescer_, metrics)
                                  : nullptr),
      stop_slices_(shutdown_, [this] { slices_.Stop(); }) {
  sync_.SetClusterFeatures(options_.features);
}

NodeReconciler::~NodeReconciler() { Stop(); }

bool NodeReconciler::Start() {
  if (shutdown_.stop_requested()) return false;
  slices_.Start();
  coalescer_.Start();
  if (uevents_ != nullptr) uevents_->Start();
  slices_.WaitForSync();  // returns at once when the informer was stopped (shutdown)
  if (shutdown_.stop_requested()) return false;
  loop_.Start();
  return true;
}

void NodeReconciler::StopTriggers() {
  if (uevents_ != nullptr) uevents_->Stop();
  coalescer_.Stop();
  slices_.Stop();
}

void NodeReconciler::Stop() {
  StopTriggers();
  loop_.Stop();
}

void NodeReconciler::Enqueue() { loop_.Enqueue(); }

bool NodeReconciler::ProcessOneForTest() { return loop_.ProcessOneForTest(); }

absl::Status NodeReconciler::RunPass() {
  const discovery::ScanClock::time_point started = discovery::ScanClock::now();
  absl::StatusOr<discovery::Inventory> inventory = Scan();
  absl::Status published = inventory.status();
  if (inventory.ok()) {
    std::vector<std::string> conditions = OtherUnits(*inventory);
    const std::vector<DampedDevice> damped = Damp(&*inventory);
    for (const DampedDevice& d : damped) conditions.push_back(absl::StrCat(d.name, ": ", d.Reason()));
    bool changed = false;
    {
      absl::MutexLock lock(&conditions_mu_);
      changed = conditions != conditions_;
      if (changed) conditions_ = conditions;
    }
    if (changed && options_.on_device_conditions) options_.on_device_conditions(conditions);
    devices_->UpdateInventory(*inventory, started);  // its one holder, the kubelet side's device catalog
    const std::vector<apis::SliceDevice> tainted = UnpluggedTainted(*inventory, damped);
    // A tainted device whose name the scan found (another unit in its port) is published as the claimed unit.
    std::optional<discovery::Inventory> replaced;
    if (std::any_of(tainted.begin(), tainted.end(), [&](const auto& t) { return inventory->Find(t.name) != nullptr; })) {
      replaced = WithoutNames(*inventory, tainted);
    }
    published = PublishSlices(
        discovery::BuildResourceSlices(options_.node_name, replaced ? *replaced : *inventory, 0, tainted));
  }
  // Also after a failed scan or write: the prepared claims follow the hardware even while the API server is away.
  // Once shutdown was raised a new driver pod may own the CDI specs: neither step runs.
  if (!shutdown_.stop_requested()) {
    RefreshPreparedClaims();  // the CDI specs of the prepared claims
    UpdateClaimStatus();      // their status.devices: a device gone or back
    ::malloc_trim(0);         // a pass's temporary strings leave free pages inside the heap: give them back
  }
  return published;
}

absl::StatusOr<discovery::Inventory> NodeReconciler::Scan() {
  const absl::Time start = absl::Now();
  auto inventory = scanner_->Scan();
  if (inventory.ok() && metrics_ != nullptr) {
    metrics_->OnScan(inventory->published.size(), inventory->withheld.size(), inventory->unclaimed.size(),
                     inventory->left_out.size(), absl::Now() - start);
    metrics_->OnIdleUsb(inventory->IdleUsb().size());
  }
  if (inventory.ok()) LogNewlyIdleUsb(*inventory);
  return inventory;
}

void NodeReconciler::LogNewlyIdleUsb(const discovery::Inventory& inventory) {
  std::set<std::string> idle;
  for (const discovery::LeftOutDevice* device : inventory.IdleUsb()) {
    idle.insert(device->name);
    if (!idle_usb_.contains(device->name)) {
      LogWarning("USB device left out: " + device->idle,
                 {{"device", device->name}, {"reason", device->reason}});
    }
  }
  idle_usb_ = std::move(idle);
}

std::vector<DampedDevice> NodeReconciler::Damp(discovery::Inventory* inventory) {
  std::set<std::string> present;
  for (const auto& d : inventory->published) present.insert(d.name);
  std::vector<DampedDevice> damped = damper_.Observe(present);
  if (metrics_ != nullptr) metrics_->OnFlapDamping(damped.size(), damper_.starts());
  if (damped.empty()) return damped;
  // Nothing else may come to run a pass once the device is quiet: ask for the one that releases it.
  loop_.EnqueueAfter(damper_.UntilRelease());
  // A damped device is withheld, present or not: the scheduler offers it to no claim, a claim that holds it sees it
  // unhealthy, and its claims' CDI specs keep what was recorded, until it is stable.
  std::map<std::string, std::string> reasons;
  for (const DampedDevice& d : damped) reasons[d.name] = d.Reason();
  std::erase_if(inventory->published, [&](const discovery::PublishedDevice& d) {
    auto it = reasons.find(d.name);
    if (it == reasons.end()) return false;
    inventory->withheld.push_back({d.name, it->second});
    return true;
  });
  return damped;
}

std::vector<std::string> NodeReconciler::OtherUnits(const discovery::Inventory& inventory) {
  std::vector<std::string> lines;
  std::set<std::string> now;
  for (const nodestate::HeldDevice& h : devices_->HeldDevices()) {
    const discovery::PublishedDevice* found = inventory.Find(h.name);
    if (h.admin_access_only || found == nullptr) continue;
    const discovery::DeviceIdentity prepared = discovery::IdentityOf(h.attributes);
    const discovery::DeviceIdentity other = discovery::IdentityOf(found->attributes);
    if (discovery::SameUnit(prepared, other)) continue;
    now.insert(h.name);
    const std::string line = absl::StrCat(h.name, ": another unit (", discovery::IdentityText(other),
                                          ") in the claimed device's place (", discovery::IdentityText(prepared),
                                          "): the claimed device is gone for its claim");
    if (other_units_.count(h.name) == 0) {
      LogWarning("another unit holds a claimed device's name: the claim keeps the device it was prepared with, gone",
                 {{"device", h.name},
                  {"prepared", discovery::IdentityText(prepared)},
                  {"found", discovery::IdentityText(other)}});
    }
    lines.push_back(line);
  }
  for (const std::string& name : other_units_) {
    if (now.count(name) == 0) {
      LogInfo("a claimed device's name no longer holds another unit (the claimed unit back, or the claim ended)",
              {{"device", name}});
    }
  }
  other_units_ = std::move(now);
  return lines;
}

std::vector<std::string> NodeReconciler::DeviceConditions() const {
  absl::MutexLock lock(&conditions_mu_);
  return conditions_;
}

std::vector<apis::SliceDevice> NodeReconciler::UnpluggedTainted(const discovery::Inventory& inventory,
                                                                const std::vector<DampedDevice>& damped) {
  if (!options_.taint_unplugged) return {};
  // A server that drops taints would publish the device as if it were present: the contract's behaviour then.
  if (options_.features != nullptr && !options_.features->TaintsServed()) return {};
  // A damped device is neither published nor tainted while it flaps: each flap would be a write.
  std::vector<nodestate::HeldDevice> held = devices_->HeldDevices();
  std::erase_if(held, [&](const nodestate::HeldDevice& h) {
    return std::any_of(damped.begin(), damped.end(), [&](const DampedDevice& d) { return d.name == h.name; });
  });
  std::vector<apis::SliceDevice> tainted = unplugged_.Tainted(inventory, held, [this] {
    std::vector<apis::ResourceSlice> published;
    for (const auto& obj : slices_.store()->List()) {
      if (auto slice = apis::ParseResourceSlice(*obj); slice.ok()) published.push_back(*std::move(slice));
    }
    return published;
  });
  // The limit fires on time: a pass when the first taint runs out (a later request keeps the earlier time).
  if (std::optional<absl::Time> expiry = unplugged_.NextExpiry()) loop_.EnqueueAfter(*expiry - clock_->Now());
  return tainted;
}

absl::Status NodeReconciler::PublishSlices(const std::vector<apis::ResourceSlice>& desired) {
  // The periodic resync does not read the Node again: its UID is read once, and again only when a slice it
  // owned was deleted behind our back (the garbage collector's answer to a Node re-created under a new UID)
  // or an update found the slice gone. An idle node makes no API request.
  // The node's write budget: a change past it waits (the latest state is written when it may), so a storm of
  // uevents or a flapping device costs a few writes a minute. A pass that changes nothing spends none.
  if (last_written_.has_value() && !SameSlices(*last_written_, desired)) {
    const absl::Duration wait = budget_.TryTake();
    if (wait > absl::ZeroDuration()) {
      ++deferred_writes_;
      if (metrics_ != nullptr) metrics_->OnSliceWriteDeferred();
      loop_.EnqueueAfter(wait);
      return absl::OkStatus();
    }
  }
  auto result = sync_.Sync(desired);
  if (!result.ok()) return result.status();
  last_written_ = desired;
  if (result->created + result->updated + result->deleted > 0) {
    LogInfo("slices published", {{"created", absl::StrCat(result->created)},
                                 {"updated", absl::StrCat(result->updated)},
                                 {"deleted", absl::StrCat(result->deleted)}});
  }
  return absl::OkStatus();
}

void NodeReconciler::RefreshPreparedClaims() {
  auto refreshed = devices_->RefreshPreparedClaims();
  if (!refreshed.ok()) LogWarning("claim refresh failed", {{"error", refreshed.status().ToString()}});
}

void NodeReconciler::UpdateClaimStatus() {
  if (options_.claim_statuses == nullptr) return;
  // The inventory its holder has now (a prepare's rescan may be newer than this pass's scan); none yet is no news
  // of unplugged devices. The writer only records it and enqueues the claims whose devices' presence changed.
  std::optional<std::set<std::string>> present = devices_->PresentDevices();
  if (present) options_.claim_statuses->SetPresentDevices(*std::move(present));
}

}  // namespace liken::controller
