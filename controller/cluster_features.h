// What the API server serves of the features liken-dra's contract relies on: its release (GET /version), what it
// keeps of a slice (a dry-run write, then every real write's reply), and what the release's default feature gates
// imply. Read by the slice sync (a dropped field must not cause writes), the metrics and `liken-dra report`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "informers/kube_client.h"

namespace liken::controller {

// The features tracked, as metric labels and report keys.
// allowMultipleAllocations kept on slices (DRAConsumableCapacity): render halves shared between claims.
inline constexpr char kFeatureRenderSharing[] = "render_sharing";
// resourceclaims/driver associated-node verbs checked (DRAResourceClaimGranularStatusAuthorization): a driver's
// credentials write status.devices of its own node's claims only.
inline constexpr char kFeatureNodeScopedClaimStatus[] = "node_scoped_claim_status";
// Device health in the pod's status (ResourceHealthStatus).
inline constexpr char kFeaturePodHealth[] = "pod_health";
// taints kept on slices' devices (DRADeviceTaints): a claimed device that went away can be published tainted, so
// its pods are evicted (--taint-unplugged-devices).
inline constexpr char kFeatureDeviceTaints[] = "device_taints";

// Every tracked feature, in report order. Thread-safe.
const std::vector<std::string>& ClusterFeatureNames();

// The API server's release, from GET /version.
struct ServerVersion {
  std::string git_version;  // "v1.34.4"
  int major = 0;
  int minor = 0;  // "34" and "34+" both give 34
};

// Parses a /version answer. InvalidArgument when major or minor is missing or not a number. Thread-safe.
absl::StatusOr<ServerVersion> ParseServerVersion(const nlohmann::json& j);

// How a feature's state is known.
enum class FeatureSource {
  kUnknown,   // nothing read yet (the gauge reads 0)
  kRelease,   // the release's default feature gates
  kObserved,  // what the server did with our own (dry-run or real) write
};

// One feature's state.
struct FeatureState {
  bool served = false;
  FeatureSource source = FeatureSource::kUnknown;
};

// The cluster's features. Thread-safe (one mutex; `on_change` runs outside it, on the thread that made the change).
class ClusterFeatures {
 public:
  // Called with the feature's name and new state when it changes; may be empty.
  using ChangeFunc = std::function<void(const std::string& feature, const FeatureState& state)>;

  explicit ClusterFeatures(ChangeFunc on_change = nullptr);

  // Records the server's release and sets each feature not yet observed from the release's defaults. Logs once
  // what an absent feature means. Thread-safe.
  void SetVersion(const ServerVersion& version);

  // Records what the server stored of a slice we sent (`sent` and `stored` are ResourceSlice JSON): a device sent
  // with allowMultipleAllocations that comes back without it means render halves cannot be shared; a device sent
  // with taints that comes back without them means device taints are not served. Logs a change once. Objects that
  // carry no such device tell nothing. Thread-safe.
  void ObserveSliceWrite(const nlohmann::json& sent, const nlohmann::json& stored);

  // True when the server was seen dropping allowMultipleAllocations. Thread-safe.
  bool DropsAllowMultipleAllocations() const;

  // True unless render sharing is known to be served: the slice diff then ignores allowMultipleAllocations (a
  // write for it alone would be dropped again, or is deferred until the start-up probe has answered; the change
  // callback asks for the pass that adds it). Thread-safe.
  bool SharingMayBeDropped() const;

  // True when device taints are known to be served (observed, or the release's defaults while nothing was
  // observed): only then does the node publish a claimed device that went away, tainted. Thread-safe.
  bool TaintsServed() const;

  // The state of `feature` (kUnknown for a name not tracked). Thread-safe.
  FeatureState Get(std::string_view feature) const;

  // {"version": "v1.34.4", "features": {"render_sharing": {"served": false, "source": "observed",
  //  "meaning": "..."}, ...}} for `liken-dra report`. Thread-safe.
  nlohmann::json ToJson() const;

 private:
  // Sets `feature`; returns true when it changed. Logs a feature not served.
  bool Set(const std::string& feature, FeatureState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ChangeFunc on_change_;
  mutable absl::Mutex mu_;
  ServerVersion version_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, FeatureState> features_ ABSL_GUARDED_BY(mu_);
};

// What a feature that is not served means for the operator (one sentence). Thread-safe.
std::string_view FeatureMissingMeaning(std::string_view feature);

// Reads the cluster at start-up: GET /version (SetVersion), then a dry-run server-side apply of a probe slice for
// `node_name` (named "<node>-liken.sh-probe", one device with allowMultipleAllocations and a NoSchedule taint;
// nothing is stored) and
// ObserveSliceWrite of its answer. Each failure is logged and returned (the first); what did answer is kept. Never
// fatal: the caller goes on with what is known. Thread-safe.
absl::Status ProbeClusterFeatures(informers::KubeClient* client, const std::string& node_name,
                                  const std::string& driver, ClusterFeatures* features);

// Renders ClusterFeatures::ToJson (as read back from the daemon's state file) as report text. Thread-safe.
std::string ClusterFeaturesToText(const nlohmann::json& j);

}  // namespace liken::controller
