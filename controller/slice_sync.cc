#include "controller/slice_sync.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/node_pass_loop.h"
#include "common/log.h"

namespace liken::controller {
namespace {

// A slice from the cache that does not parse still takes part: by name, with no known content.
apis::ResourceSlice ParseOrPlaceholder(const nlohmann::json& j) {
  auto parsed = apis::ParseResourceSlice(j);
  if (parsed.ok()) return *std::move(parsed);
  LogWarning("slice sync: cached ResourceSlice does not parse; it will be rewritten or deleted",
             {{"error", std::string(parsed.status().message())}});
  apis::ResourceSlice slice;
  slice.raw = j;
  if (j.is_object() && j.contains("metadata")) {
    if (auto meta = apis::ParseObjectMeta(j["metadata"]); meta.ok()) slice.metadata = *std::move(meta);
  }
  slice.raw.erase("spec");  // rewritten from scratch
  slice.metadata.raw = slice.metadata.raw.is_object() ? slice.metadata.raw : nlohmann::json::object();
  return slice;
}

}  // namespace

std::string_view SliceRuleOf(absl::string_view message) {
  if (absl::StrContains(message, "ResourceSliceMaxDevicesWithTaintsOrConsumesCounters") ||
      absl::StrContains(message, absl::StrCat("must have at most ", apis::kMaxDevicesPerSliceWithTaintsOrCounters,
                                              " items"))) {
    return "ResourceSliceMaxDevicesWithTaintsOrConsumesCounters";
  }
  if (absl::StrContains(message, "ResourceSliceMaxDevices") ||
      absl::StrContains(message, absl::StrCat("must have at most ", apis::kMaxDevicesPerSlice, " items"))) {
    return "ResourceSliceMaxDevices";
  }
  return "other";
}

SliceSync::SliceSync(std::string node_name, std::string driver, informers::KubeClient* client,
                     const informers::Store* cache, SliceSyncObserver* observer)
    : node_name_(std::move(node_name)),
      driver_(std::move(driver)),
      client_(client),
      cache_(cache),
      observer_(observer) {}

void SliceSync::Report(std::string_view op, const absl::Status& status) {
  if (observer_ == nullptr) return;
  observer_->OnSliceWrite(op, status.ok() ? "success" : informers::IsConflict(status) ? "conflict" : "error");
}

absl::Status SliceSync::EnsureNodeUid() {
  if (!node_uid_.empty()) return absl::OkStatus();
  auto node = client_->Get(informers::NodePath(node_name_));
  if (!node.ok()) {
    return absl::Status(node.status().code(),
                        absl::StrCat("reading Node ", node_name_, " for the slices' owner: ", node.status().message()));
  }
  const nlohmann::json* uid = nullptr;
  if (node->is_object()) {
    if (auto meta = node->find("metadata"); meta != node->end() && meta->is_object()) {
      if (auto u = meta->find("uid"); u != meta->end() && u->is_string()) uid = &*u;
    }
  }
  if (uid == nullptr || uid->get_ref<const std::string&>().empty()) {
    return absl::InternalError(absl::StrCat("Node ", node_name_, " has no metadata.uid"));
  }
  if (!node_uid_stale_.empty() && *uid != node_uid_stale_) {
    LogInfo("slice sync: the Node was re-created; slices get the new owner",
            {{"old_uid", node_uid_stale_}, {"new_uid", uid->get<std::string>()}});
  }
  node_uid_ = uid->get<std::string>();
  node_uid_stale_.clear();
  return absl::OkStatus();
}

void SliceSync::RecheckOwner() {
  if (node_uid_.empty()) return;
  node_uid_stale_ = node_uid_;
  node_uid_.clear();
}

void SliceSync::ReportRefusal(const SliceAction& action, const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) return;
  const std::string_view rule = SliceRuleOf(status.message());
  LogError("slice sync: the API server refused a slice; the pool is incomplete until it is written: retrying with "
           "backoff",
           {{"slice", action.target.metadata.name},
            {"pool", action.target.pool.name},
            {"generation", absl::StrCat(action.target.pool.generation)},
            {"devices", absl::StrCat(action.target.devices.size())},
            {"rule", std::string(rule)},
            {"error", std::string(status.message())}});
  if (observer_ != nullptr) observer_->OnSliceRefused(rule, "server");
}

void SliceSync::Refresh(const std::string& name) {
  writes_.Forget(name);
  auto fresh = client_->Get(informers::ResourceSlicePath(name));
  if (!fresh.ok()) return;  // NotFound: the cache will catch up; other errors: the retry will tell
  writes_.RecordRead(ParseOrPlaceholder(*fresh));
}

std::map<std::string, apis::ResourceSlice> SliceSync::CurrentSlices() {
  std::map<std::string, apis::ResourceSlice> current;
  for (const auto& obj : cache_->List()) {
    apis::ResourceSlice slice = ParseOrPlaceholder(*obj);
    if (slice.metadata.name.empty()) continue;
    // The cache is filtered by the server; skip what does not belong to us anyway.
    if (!slice.driver.empty() && slice.driver != driver_) continue;
    if (!slice.node_name.empty() && slice.node_name != node_name_) continue;
    current[slice.metadata.name] = std::move(slice);
  }
  writes_.Overlay(cache_->ResourceVersion(), &current);
  return current;
}

absl::StatusOr<SliceSyncResult> SliceSync::Sync(const std::vector<apis::ResourceSlice>& desired) {
  SliceSyncResult total;
  // Two rounds at most: the second only when an update found its slice gone (the garbage collector deletes
  // the slices of a Node re-created under a new UID): it reads the owner again and plans what is left.
  for (int round = 0; round < 2; ++round) {
    std::map<std::string, apis::ResourceSlice> current;  // the plan points into it
    auto plan = Plan(desired, &current);
    if (!plan.ok()) return plan.status();
    Applied applied = Apply(*std::move(plan));
    total.created += applied.result.created;
    total.updated += applied.result.updated;
    total.deleted += applied.result.deleted;
    if (!applied.first_error.ok()) return applied.first_error;
    if (applied.gone.empty()) break;
    RecheckOwner();
  }
  return total;
}

absl::StatusOr<SlicePlan> SliceSync::Plan(const std::vector<apis::ResourceSlice>& desired,
                                          std::map<std::string, apis::ResourceSlice>* current) {
  *current = CurrentSlices();
  std::set<std::string> desired_names;
  for (const auto& slice : desired) desired_names.insert(slice.metadata.name);
  // A slice of a pool we published that is gone was deleted behind our back, possibly by the garbage
  // collector because the Node was re-created under a new UID: read the Node again.
  std::set<std::string> pools_deleted_behind;
  for (const auto& [pool_name, pub] : published_) {
    for (const auto& name : pub.live) {
      if (current->count(name) > 0) continue;
      pools_deleted_behind.insert(pool_name);
      if (desired_names.count(name) > 0) RecheckOwner();
    }
  }
  if (absl::Status s = EnsureNodeUid(); !s.ok()) return s;
  SlicePlanContext context{driver_, node_name_, apis::OwnerReference{"v1", "Node", node_name_, node_uid_, true}};
  context.server_drops_sharing = features_ != nullptr && features_->SharingMayBeDropped();
  return PlanSlices(context, desired, *current, writes_, published_, pools_deleted_behind);
}

bool SliceSync::Create(const SliceAction& action, Applied* applied) {
  const std::string& name = action.target.metadata.name;
  const nlohmann::json body = apis::ResourceSliceToJson(action.body);
  auto reply = client_->Create(informers::ResourceSlicesPath(), body);
  Report("create", reply.status());
  if (!reply.ok()) {
    ReportRefusal(action, reply.status());
    if (reply.status().code() == absl::StatusCode::kAlreadyExists) Refresh(name);
    if (applied->first_error.ok()) applied->first_error = reply.status();
    return false;
  }
  writes_.RecordWrite(action.body, *reply);
  if (features_ != nullptr) features_->ObserveSliceWrite(body, *reply);
  ++applied->result.created;
  return true;
}

bool SliceSync::Update(const SliceAction& action, Applied* applied) {
  const std::string& name = action.target.metadata.name;
  const nlohmann::json body = apis::ResourceSliceToJson(action.body);
  auto reply = client_->Update(informers::ResourceSlicePath(name), body);
  Report("update", reply.status());
  if (!reply.ok()) {
    ReportRefusal(action, reply.status());
    if (reply.status().code() == absl::StatusCode::kNotFound) {
      // Deleted behind our back since the cache saw it: hidden from the next plan, which creates it again.
      writes_.RecordDelete(name, action.have != nullptr ? action.have->metadata.uid : "");
      applied->gone.push_back(name);
      return false;
    }
    if (informers::IsConflict(reply.status())) Refresh(name);
    if (applied->first_error.ok()) applied->first_error = reply.status();
    return false;
  }
  writes_.RecordWrite(action.body, *reply);
  if (features_ != nullptr) features_->ObserveSliceWrite(body, *reply);
  ++applied->result.updated;
  return true;
}

bool SliceSync::Delete(const apis::ResourceSlice& slice, Applied* applied) {
  const std::string& name = slice.metadata.name;
  absl::Status s = client_->Delete(informers::ResourceSlicePath(name), slice.metadata.uid);
  if (s.code() == absl::StatusCode::kNotFound) s = absl::OkStatus();
  Report("delete", s);
  if (!s.ok()) {
    if (informers::IsConflict(s)) Refresh(name);
    if (applied->first_error.ok()) applied->first_error = s;
    return false;
  }
  writes_.RecordDelete(name, slice.metadata.uid);
  ++applied->result.deleted;
  return true;
}

SliceSync::Applied SliceSync::Apply(SlicePlan plan) {
  Applied applied;
  for (PoolPlan& pool : plan.pools) {
    if (!pool.invalid.ok()) {
      const std::string_view rule = SliceRuleOf(pool.invalid.message());
      LogError("slice sync: not publishing an invalid pool; nothing of it written",
               {{"pool", pool.pool}, {"rule", std::string(rule)}, {"error", std::string(pool.invalid.message())}});
      if (observer_ != nullptr) observer_->OnSliceRefused(rule, "driver");
      if (applied.first_error.ok()) applied.first_error = PermanentError(pool.invalid);
      continue;
    }
    std::set<std::string> live;  // slices on the server under the pool's generation after this pass
    for (const SliceAction& action : pool.actions) {
      bool written = true;  // a keep
      if (action.kind == SliceAction::Kind::kCreate) written = Create(action, &applied);
      if (action.kind == SliceAction::Kind::kUpdate) written = Update(action, &applied);
      if (written) live.insert(action.target.metadata.name);
    }
    PublishedPool& published = published_[pool.pool];
    published.highest_generation = std::max(published.highest_generation, pool.generation);
    published.generation = pool.generation;
    published.content = std::move(pool.content);
    published.live = std::move(live);
  }
  for (const auto& slice : plan.deletes) Delete(slice, &applied);
  return applied;
}

}  // namespace liken::controller
