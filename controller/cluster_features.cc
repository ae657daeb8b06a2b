#include "controller/cluster_features.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {
namespace {

// The first release whose default gates serve each feature (DRAConsumableCapacity,
// DRAResourceClaimGranularStatusAuthorization and ResourceHealthStatus: beta and on from 1.36).
constexpr int kFirstMinorWithDefaults = 36;

// The leading number of "34" or "34+".
bool LeadingNumber(const nlohmann::json& j, int* out) {
  if (!j.is_string()) return false;
  std::string s = j.get<std::string>();
  size_t n = 0;
  while (n < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[n]))) ++n;
  return n > 0 && absl::SimpleAtoi(s.substr(0, n), out);
}

std::string_view SourceName(FeatureSource source) {
  switch (source) {
    case FeatureSource::kRelease:
      return "release-defaults";
    case FeatureSource::kObserved:
      return "observed";
    case FeatureSource::kUnknown:
      break;
  }
  return "unknown";
}

// The allowMultipleAllocations values of a slice's devices, by device name; devices without the field are absent.
std::map<std::string, bool> SharingOf(const nlohmann::json& slice) {
  std::map<std::string, bool> out;
  if (!slice.is_object()) return out;
  auto spec = slice.find("spec");
  if (spec == slice.end() || !spec->is_object()) return out;
  auto devices = spec->find("devices");
  if (devices == spec->end() || !devices->is_array()) return out;
  for (const auto& d : *devices) {
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) continue;
    auto f = d.find("allowMultipleAllocations");
    if (f != d.end() && f->is_boolean()) out[d["name"].get<std::string>()] = f->get<bool>();
  }
  return out;
}

}  // namespace

const std::vector<std::string>& ClusterFeatureNames() {
  static const std::vector<std::string> kNames = {kFeatureRenderSharing, kFeatureNodeScopedClaimStatus,
                                                  kFeaturePodHealth};
  return kNames;
}

std::string_view FeatureMissingMeaning(std::string_view feature) {
  if (feature == kFeatureRenderSharing) {
    return "the API server drops allowMultipleAllocations (DRAConsumableCapacity off): each GPU render half is one "
           "exclusive device; pods share one by naming the same ResourceClaim";
  }
  if (feature == kFeatureNodeScopedClaimStatus) {
    return "the release does not check the associated-node verbs (DRAResourceClaimGranularStatusAuthorization "
           "absent): only the chart's admission policy (own-node claim status) keeps the driver's credentials to "
           "its own node's status.devices entries; without it they can patch status of any ResourceClaim";
  }
  if (feature == kFeaturePodHealth) {
    return "device health does not reach the pod's status by default (ResourceHealthStatus off); the driver still "
           "serves it to the kubelet";
  }
  return "unknown feature";
}

absl::StatusOr<ServerVersion> ParseServerVersion(const nlohmann::json& j) {
  ServerVersion v;
  if (!j.is_object() || !LeadingNumber(j.value("major", nlohmann::json()), &v.major) ||
      !LeadingNumber(j.value("minor", nlohmann::json()), &v.minor)) {
    return absl::InvalidArgumentError("the /version answer has no numeric major and minor");
  }
  auto gv = j.find("gitVersion");
  v.git_version = gv != j.end() && gv->is_string() ? gv->get<std::string>() : absl::StrCat("v", v.major, ".", v.minor);
  return v;
}

ClusterFeatures::ClusterFeatures(ChangeFunc on_change) : on_change_(std::move(on_change)) {
  for (const auto& name : ClusterFeatureNames()) features_[name] = FeatureState{};
}

bool ClusterFeatures::Set(const std::string& feature, FeatureState state) {
  FeatureState& have = features_[feature];
  if (have.served == state.served && have.source == state.source) return false;
  const bool announce = have.source == FeatureSource::kUnknown || have.served != state.served;
  have = state;
  if (!announce) return true;
  if (state.served) {
    LogInfo("cluster feature served", {{"feature", feature}, {"source", std::string(SourceName(state.source))},
                                       {"server", version_.git_version}});
  } else {
    LogWarning("cluster feature missing", {{"feature", feature}, {"source", std::string(SourceName(state.source))},
                                           {"server", version_.git_version},
                                           {"meaning", std::string(FeatureMissingMeaning(feature))}});
  }
  return true;
}

void ClusterFeatures::SetVersion(const ServerVersion& version) {
  std::vector<std::pair<std::string, FeatureState>> changed;
  {
    absl::MutexLock lock(&mu_);
    version_ = version;
    LogInfo("API server version", {{"server", version.git_version}});
    const bool defaults_on = version.major > 1 || (version.major == 1 && version.minor >= kFirstMinorWithDefaults);
    for (const auto& name : ClusterFeatureNames()) {
      if (features_[name].source == FeatureSource::kObserved) continue;
      FeatureState state{defaults_on, FeatureSource::kRelease};
      if (Set(name, state)) changed.emplace_back(name, state);
    }
  }
  if (on_change_) {
    for (const auto& [name, state] : changed) on_change_(name, state);
  }
}

void ClusterFeatures::ObserveSliceWrite(const nlohmann::json& sent, const nlohmann::json& stored) {
  const std::map<std::string, bool> asked = SharingOf(sent);
  const std::map<std::string, bool> kept = SharingOf(stored);
  bool any = false;
  bool dropped = false;
  for (const auto& [device, value] : asked) {
    if (!value) continue;
    any = true;
    auto k = kept.find(device);
    if (k == kept.end() || !k->second) dropped = true;
  }
  if (!any) return;
  FeatureState state{!dropped, FeatureSource::kObserved};
  bool changed;
  {
    absl::MutexLock lock(&mu_);
    changed = Set(kFeatureRenderSharing, state);
  }
  if (changed && on_change_) on_change_(kFeatureRenderSharing, state);
}

bool ClusterFeatures::DropsAllowMultipleAllocations() const {
  absl::MutexLock lock(&mu_);
  const FeatureState& s = features_.at(kFeatureRenderSharing);
  return s.source == FeatureSource::kObserved && !s.served;
}

bool ClusterFeatures::SharingMayBeDropped() const {
  absl::MutexLock lock(&mu_);
  return !features_.at(kFeatureRenderSharing).served;
}

FeatureState ClusterFeatures::Get(std::string_view feature) const {
  absl::MutexLock lock(&mu_);
  auto it = features_.find(std::string(feature));
  return it == features_.end() ? FeatureState{} : it->second;
}

nlohmann::json ClusterFeatures::ToJson() const {
  absl::MutexLock lock(&mu_);
  nlohmann::json features = nlohmann::json::object();
  for (const auto& name : ClusterFeatureNames()) {
    const FeatureState& s = features_.at(name);
    nlohmann::json f = {{"served", s.served}, {"source", std::string(SourceName(s.source))}};
    if (!s.served) f["meaning"] = std::string(FeatureMissingMeaning(name));
    features[name] = std::move(f);
  }
  return {{"version", version_.git_version}, {"features", std::move(features)}};
}

absl::Status ProbeClusterFeatures(informers::KubeClient* client, const std::string& node_name,
                                  const std::string& driver, ClusterFeatures* features) {
  // The release's defaults are applied after the probe, so that each feature is announced once, as it is.
  absl::Status first;
  absl::StatusOr<ServerVersion> parsed = absl::UnknownError("not read");
  auto version = client->Get("/version");
  if (version.ok()) {
    parsed = ParseServerVersion(*version);
    if (!parsed.ok()) first = parsed.status();
  } else {
    first = version.status();
  }
  if (!first.ok()) LogWarning("cannot read the API server's version", {{"error", first.ToString()}});

  const std::string name = absl::StrCat(node_name, "-", driver, "-probe");
  absl::Status s = informers::ValidateDnsSubdomain(name);
  if (s.ok()) {
    nlohmann::json probe = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceSlice"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"driver", driver},
          {"nodeName", node_name},
          {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
          {"devices", nlohmann::json::array({{{"name", "probe"}, {"allowMultipleAllocations", true}}})}}}};
    auto stored = client->Patch(informers::ResourceSlicePath(name),
                                absl::StrCat("dryRun=All&fieldManager=", driver, "&force=true"),
                                "application/apply-patch+yaml", probe);
    if (stored.ok()) {
      features->ObserveSliceWrite(probe, *stored);
    } else {
      s = stored.status();
    }
  }
  if (!s.ok()) {
    LogWarning("cannot probe what the API server keeps of a slice; the first slice write will tell",
               {{"error", s.ToString()}});
    if (first.ok()) first = s;
  }
  if (parsed.ok()) features->SetVersion(*parsed);
  return first;
}

std::string ClusterFeaturesToText(const nlohmann::json& j) {
  std::string out = absl::StrCat("Cluster (from the running daemon): Kubernetes ",
                                 j.is_object() ? j.value("version", std::string("unknown")) : "unknown", "\n");
  if (!j.is_object() || !j.contains("features") || !j["features"].is_object()) return out;
  for (const auto& [name, f] : j["features"].items()) {
    if (!f.is_object()) continue;
    absl::StrAppend(&out, "  ", name, ": ", f.value("served", false) ? "served" : "NOT served", " (",
                    f.value("source", std::string("unknown")), ")");
    if (f.contains("meaning") && f["meaning"].is_string()) absl::StrAppend(&out, ": ", f["meaning"].get<std::string>());
    out += "\n";
  }
  return out;
}

}  // namespace liken::controller
