#include "clusterview/cluster_snapshot.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace liken::clusterview {
namespace {

constexpr char kResourceGroupVersion[] = "/apis/resource.k8s.io/v1";

absl::Status Annotate(const absl::Status& status, const std::string& what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

std::string NamespacedPath(const std::string& prefix, const std::string& namespace_name,
                           const std::string& resource) {
  if (namespace_name.empty()) return absl::StrCat(prefix, "/", resource);
  return absl::StrCat(prefix, "/namespaces/", namespace_name, "/", resource);
}

}  // namespace

absl::Status CheckResourceApiServed(informers::KubeClient& client) {
  absl::StatusOr<nlohmann::json> served = client.Get(kResourceGroupVersion);
  if (served.ok()) return absl::OkStatus();
  if (absl::IsNotFound(served.status())) {
    return absl::FailedPreconditionError(
        "the cluster does not serve resource.k8s.io/v1 (Dynamic Resource Allocation, Kubernetes 1.34 or later): "
        "liken publishes its devices only there, so there is nothing to show");
  }
  return Annotate(served.status(), absl::StrCat("reading ", kResourceGroupVersion));
}

absl::StatusOr<std::vector<nlohmann::json>> ListAll(informers::KubeClient& client, const std::string& path,
                                                    const informers::RequestOptions& options, std::stop_token cancel) {
  std::vector<nlohmann::json> items;
  informers::RequestOptions page = options;
  page.limit = 500;
  while (true) {
    absl::StatusOr<nlohmann::json> list = client.List(path, page, cancel);
    if (!list.ok()) return Annotate(list.status(), absl::StrCat("listing ", path));
    if (list->contains("items") && (*list)["items"].is_array()) {
      for (auto& item : (*list)["items"]) {
        if (items.size() >= kMaxListItems) {
          return absl::ResourceExhaustedError(
              absl::StrCat("listing ", path, ": more than ", kMaxListItems, " objects; narrow it with -n"));
        }
        items.push_back(std::move(item));
      }
    }
    std::string next;
    if (auto m = list->find("metadata"); m != list->end() && m->is_object()) next = m->value("continue", "");
    if (next.empty()) return items;
    page.continue_token = next;
  }
}

absl::StatusOr<ClusterSnapshot> FetchSnapshot(informers::KubeClient& client, const SnapshotScope& scope,
                                              std::stop_token cancel) {
  if (absl::Status served = CheckResourceApiServed(client); !served.ok()) return served;
  ClusterSnapshot snapshot;
  informers::RequestOptions liken_only;
  liken_only.field_selector = absl::StrCat("spec.driver=", kLikenDriver);
  auto slices = ListAll(client, absl::StrCat(kResourceGroupVersion, "/resourceslices"), liken_only, cancel);
  if (!slices.ok()) return slices.status();
  for (const auto& j : *slices) {
    auto slice = apis::ParseResourceSlice(j);
    if (!slice.ok()) return Annotate(slice.status(), "a ResourceSlice");
    if (slice->driver != kLikenDriver) continue;  // a server that ignored the field selector
    snapshot.slices.push_back(*std::move(slice));
  }
  auto claims = ListAll(client, NamespacedPath(kResourceGroupVersion, scope.namespace_name, "resourceclaims"), {},
                        cancel);
  if (!claims.ok()) return claims.status();
  for (const auto& j : *claims) {
    auto claim = apis::ParseResourceClaim(j);
    if (!claim.ok()) return Annotate(claim.status(), "a ResourceClaim");
    snapshot.claims.push_back(*std::move(claim));
  }
  if (scope.pods) {
    auto pods = ListAll(client, NamespacedPath("/api/v1", scope.namespace_name, "pods"), {}, cancel);
    if (!pods.ok()) return pods.status();
    snapshot.pods = *std::move(pods);
  }
  if (scope.device_classes) {
    auto classes = ListAll(client, absl::StrCat(kResourceGroupVersion, "/deviceclasses"), {}, cancel);
    if (!classes.ok()) return classes.status();
    snapshot.device_classes = *std::move(classes);
  }
  if (scope.nodes) {
    auto nodes = ListAll(client, "/api/v1/nodes", {}, cancel);
    if (nodes.ok()) {
      snapshot.nodes = *std::move(nodes);
    } else if (absl::IsPermissionDenied(nodes.status())) {
      snapshot.nodes_unreadable = std::string(nodes.status().message());
    } else {
      return nodes.status();
    }
  }
  return snapshot;
}

absl::StatusOr<std::vector<nlohmann::json>> FetchPodEvents(informers::KubeClient& client,
                                                           const std::string& namespace_name, const std::string& pod,
                                                           std::stop_token cancel) {
  informers::RequestOptions options;
  options.field_selector = absl::StrCat("involvedObject.kind=Pod,involvedObject.name=", pod);
  auto events = ListAll(client, absl::StrCat("/api/v1/namespaces/", namespace_name, "/events"), options, cancel);
  if (!events.ok()) return events;
  auto when = [](const nlohmann::json& e) {
    std::string t = e.value("lastTimestamp", nlohmann::json()).is_string() ? e["lastTimestamp"].get<std::string>() : "";
    if (t.empty() && e.contains("eventTime") && e["eventTime"].is_string()) t = e["eventTime"].get<std::string>();
    return t;
  };
  std::stable_sort(events->begin(), events->end(),
                   [&](const nlohmann::json& a, const nlohmann::json& b) { return when(a) < when(b); });
  return events;
}

}  // namespace liken::clusterview
