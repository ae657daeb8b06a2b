#include "controller/node_reconciler.h"

#include <malloc.h>

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
                               discovery::Scanner* scanner, NodeDevices* devices,
                               std::unique_ptr<UeventSource> uevents, Metrics* metrics, std::stop_token shutdown)
    : options_(std::move(options)),
      scanner_(scanner),
      devices_(devices),
      metrics_(metrics),
      shutdown_(std::move(shutdown)),
      queue_(clock, NewControllerRateLimiter(clock, absl::Milliseconds(5), absl::Seconds(30), 10, 100), metrics),
      slices_(client, clock, NodeSliceInformerOptions(options_.node_name), &loop_, metrics),
      sync_(options_.node_name, discovery::kDriverName, client, slices_.store(), metrics),
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
    published = PublishSlices(discovery::BuildResourceSlices(options_.node_name, *inventory, 0));
  }
  RefreshPreparedClaims();  // the CDI specs follow the hardware even while the API server is away
  return published;
}

absl::StatusOr<discovery::Inventory> NodeReconciler::Scan() {
  const absl::Time start = absl::Now();
  auto inventory = scanner_->Scan();
  if (inventory.ok() && metrics_ != nullptr) {
    metrics_->OnScan(inventory->published.size(), inventory->withheld.size(), inventory->unclaimed.size(),
                     inventory->left_out.size(), absl::Now() - start);
  }
  return inventory;
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
  if (shutdown_.stop_requested()) return;
  auto refreshed = devices_->RefreshPreparedClaims();
  if (!refreshed.ok()) LogWarning("claim refresh failed", {{"error", refreshed.status().ToString()}});
  ::malloc_trim(0);  // a pass's temporary strings leave free pages inside the heap: give them back
}

}  // namespace liken::controller
