#include "controller/node_reconciler.h"

#include <malloc.h>

#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "common/rate_limiter.h"
#include "discovery/inventory.h"
#include "discovery/slice_builder.h"
#include "informers/store.h"

namespace liken::controller {

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
    devices_->UpdateInventory(*inventory, started);  // its one holder, the kubelet side's device catalog
    published = PublishSlices(
        discovery::BuildResourceSlices(options_.node_name, *inventory, 0, UnpluggedTainted(*inventory)));
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

std::vector<apis::SliceDevice> NodeReconciler::UnpluggedTainted(const discovery::Inventory& inventory) {
  if (!options_.taint_unplugged) return {};
  // A server that drops taints would publish the device as if it were present: the contract's behaviour then.
  if (options_.features != nullptr && !options_.features->TaintsServed()) return {};
  std::vector<apis::SliceDevice> tainted = unplugged_.Tainted(inventory, devices_->HeldDevices(), [this] {
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
  auto result = sync_.Sync(desired);
  if (!result.ok()) return result.status();
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
