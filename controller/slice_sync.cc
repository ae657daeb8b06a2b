#include "controller/slice_sync.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {
namespace {

bool IsNodeRef(const apis::OwnerReference& ref) { return ref.kind == "Node" && ref.api_version == "v1"; }

// A slice from the cache that does not parse still takes part: by name, with no known content.
apis::ResourceSlice ParseOrPlaceholder(const nlohmann::json& j) {
  auto parsed = apis::ParseResourceSlice(j);
  if (parsed.ok()) return *std::move(parsed);
  LogWarning("slice sync: cached ResourceSlice does not parse; it will be rewritten or deleted",
             {{"error", std::string(parsed.status().message())}});
  apis::ResourceSlice slice;
  slice.raw = j;
  std::string error;
  if (j.is_object() && j.contains("metadata")) apis::ParseObjectMeta(j["metadata"], &slice.metadata, &error);
  slice.raw.erase("spec");  // rewritten from scratch
  slice.metadata.raw = slice.metadata.raw.is_object() ? slice.metadata.raw : nlohmann::json::object();
  return slice;
}

}  // namespace

int64_t ResourceVersionNumber(const std::string& rv) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(rv, &n) || n < 0) return -1;
  return n;
}

SliceSync::SliceSync(std::string node_name, std::string driver, informers::KubeClient* client,
                     const informers::Store* cache, DesiredSlicesFunc desired, SliceSyncObserver* observer)
    : node_name_(std::move(node_name)),
      driver_(std::move(driver)),
      client_(client),
      cache_(cache),
      desired_(std::move(desired)),
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

void SliceSync::Remember(const apis::ResourceSlice& sent, const nlohmann::json& reply) {
  auto stored = apis::ParseResourceSlice(reply);
  if (!stored.ok()) {
    written_.erase(sent.metadata.name);
    return;
  }
  Written w{stored->metadata.resource_version, stored->metadata.uid, sent, *stored};
  written_[sent.metadata.name] = std::move(w);
}

void SliceSync::Refresh(const std::string& name) {
  written_.erase(name);
  auto fresh = client_->Get(informers::ResourceSlicePath(name));
  if (!fresh.ok()) return;  // NotFound: the cache will catch up; other errors: the retry will tell
  apis::ResourceSlice slice = ParseOrPlaceholder(*fresh);
  written_[name] = Written{slice.metadata.resource_version, slice.metadata.uid, slice, slice};
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
  // Hide what we deleted until the cache agrees.
  for (auto it = deleted_.begin(); it != deleted_.end();) {
    auto c = current.find(it->first);
    if (c != current.end() && c->second.metadata.uid == it->second) {
      current.erase(c);
      ++it;
    } else {
      it = deleted_.erase(it);
    }
  }
  // Overlay our own writes where the cache has not caught up.
  const int64_t cache_rv = ResourceVersionNumber(cache_->ResourceVersion());
  for (auto it = written_.begin(); it != written_.end();) {
    auto c = current.find(it->first);
    int64_t ours = ResourceVersionNumber(it->second.resource_version);
    if (c != current.end()) {
      int64_t theirs = ResourceVersionNumber(c->second.metadata.resource_version);
      if (theirs < 0 || ours < 0 || theirs > ours) {  // newer (or incomparable): the cache wins
        it = written_.erase(it);
        continue;
      }
      if (theirs < ours) c->second = it->second.stored;
    } else if (cache_rv >= 0 && ours >= 0 && cache_rv >= ours) {
      // The cache has seen past our write and the slice is gone: deleted behind our back.
      it = written_.erase(it);
      continue;
    } else {
      current[it->first] = it->second.stored;
    }
    ++it;
  }
  return current;
}

bool SliceSync::SameContent(const std::vector<apis::ResourceSlice>& a, const std::vector<apis::ResourceSlice>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].metadata.name != b[i].metadata.name || a[i].devices.size() != b[i].devices.size()) return false;
    for (size_t d = 0; d < a[i].devices.size(); ++d) {
      if (!a[i].devices[d].SameContent(b[i].devices[d])) return false;
    }
  }
  return true;
}

bool SliceSync::SameDevices(const apis::ResourceSlice& want, const apis::ResourceSlice& have) const {
  // When `have` is exactly what the server answered to our last write, compare with what we sent: a
  // server that drops a field it does not know (allowMultipleAllocations) must not cause another write.
  const apis::ResourceSlice* effective = &have;
  if (auto it = written_.find(have.metadata.name);
      it != written_.end() && it->second.resource_version == have.metadata.resource_version) {
    effective = &it->second.sent;
  }
  if (want.devices.size() != effective->devices.size()) return false;
  for (size_t i = 0; i < want.devices.size(); ++i) {
    if (!want.devices[i].SameContent(effective->devices[i])) return false;
  }
  return true;
}

absl::StatusOr<SliceSyncResult> SliceSync::Sync() {
  auto desired = desired_();
  if (!desired.ok()) return desired.status();

  std::map<std::string, apis::ResourceSlice> current = CurrentSlices();
  std::map<std::string, std::vector<apis::ResourceSlice>> pools;  // pool -> desired slices, in order
  std::set<std::string> desired_names;
  for (auto& slice : *desired) {
    desired_names.insert(slice.metadata.name);
    pools[slice.pool.name].push_back(std::move(slice));
  }
  // A slice of a pool we published that is gone was deleted behind our back, possibly by the garbage
  // collector because the Node was re-created under a new UID: read the Node again.
  std::set<std::string> pools_deleted_behind;
  for (const auto& [pool_name, pub] : published_) {
    for (const auto& name : pub.live) {
      if (current.count(name) > 0) continue;
      pools_deleted_behind.insert(pool_name);
      if (desired_names.count(name) > 0) RecheckOwner();
    }
  }
  if (absl::Status s = EnsureNodeUid(); !s.ok()) return s;

  SliceSyncResult result;
  absl::Status first_error;
  auto note = [&](const absl::Status& s) {
    if (!s.ok() && first_error.ok()) first_error = s;
  };
  apis::OwnerReference node_ref{"v1", "Node", node_name_, node_uid_, true};

  for (auto& [pool_name, want] : pools) {
    const int64_t count = static_cast<int64_t>(want.size());
    int64_t have_max = 0;
    int64_t have_count = 0;
    for (const auto& [name, slice] : current) {
      if (slice.pool.name != pool_name) continue;
      ++have_count;
      have_max = std::max(have_max, slice.pool.generation);
    }
    bool content_same = have_count == count;
    for (const auto& w : want) {
      auto c = current.find(w.metadata.name);
      if (c == current.end() || c->second.pool.name != pool_name || !SameDevices(w, c->second)) content_same = false;
    }
    int64_t generation = have_max;
    auto pub = published_.find(pool_name);
    if (pub != published_.end() && pools_deleted_behind.count(pool_name) == 0 && have_max <= pub->second.generation &&
        SameContent(want, pub->second.content)) {
      // Already published under this generation (perhaps only partly, after a failed write): finish
      // that generation; the slices that lag behind it are updated below without another bump. (A slice
      // deleted behind our back comes back under a new generation.)
      generation = pub->second.generation;
    } else if (!content_same || have_count == 0) {
      generation = std::max(have_max, generations_[pool_name]) + 1;
    }

    // Build and validate the whole pool before writing any of it.
    std::vector<apis::ResourceSlice> targets;
    absl::Status invalid;
    for (auto& w : want) {
      apis::ResourceSlice t = w;
      t.driver = driver_;
      t.node_name = node_name_;
      t.pool.name = pool_name;
      t.pool.generation = generation;
      t.pool.resource_slice_count = count;
      if (absl::Status s = apis::ValidateResourceSlice(t); !s.ok()) {
        invalid = absl::InvalidArgumentError(absl::StrCat("pool ", pool_name, ": ", s.message()));
        break;
      }
      targets.push_back(std::move(t));
    }
    if (!invalid.ok()) {
      LogError("slice sync: not publishing an invalid pool", {{"error", std::string(invalid.message())}});
      note(invalid);
      continue;
    }

    std::set<std::string> live;  // slices on the server under `generation` after this pass
    // Creates `t` fresh: no server fields, owned by the Node. An AlreadyExists refreshes the cached copy.
    auto create_slice = [&](const apis::ResourceSlice& t) {
      apis::ResourceSlice create = t;
      create.raw = nlohmann::json::object();
      create.metadata = apis::ObjectMeta{};
      create.metadata.name = t.metadata.name;
      create.metadata.labels = t.metadata.labels;
      create.metadata.owner_references = {node_ref};
      auto reply = client_->Create(informers::ResourceSlicesPath(), apis::ResourceSliceToJson(create));
      Report("create", reply.status());
      if (reply.ok()) {
        Remember(create, *reply);
        live.insert(t.metadata.name);
        ++result.created;
      } else {
        if (reply.status().code() == absl::StatusCode::kAlreadyExists) Refresh(t.metadata.name);
        note(reply.status());
      }
    };
    for (auto& t : targets) {
      const std::string name = t.metadata.name;
      auto c = current.find(name);
      if (c == current.end()) {
        create_slice(t);
        continue;
      }
      const apis::ResourceSlice& have = c->second;
      bool has_owner = std::any_of(have.metadata.owner_references.begin(), have.metadata.owner_references.end(),
                                   [&](const apis::OwnerReference& r) { return r == node_ref; });
      bool same = SameDevices(t, have) && have.pool.name == pool_name && have.pool.generation == generation &&
                  have.pool.resource_slice_count == count && have.driver == driver_ &&
                  have.node_name == node_name_ && has_owner;
      if (same) {
        live.insert(name);
        continue;
      }
      apis::ResourceSlice update = have;  // keeps unknown fields and resourceVersion
      update.driver = driver_;
      update.node_name = node_name_;
      update.pool = t.pool;
      update.devices = t.devices;
      std::vector<apis::OwnerReference> refs = {node_ref};
      for (const auto& r : have.metadata.owner_references) {
        if (!IsNodeRef(r)) refs.push_back(r);
      }
      update.metadata.owner_references = refs;
      auto reply = client_->Update(informers::ResourceSlicePath(name), apis::ResourceSliceToJson(update));
      if (reply.ok()) {
        Report("update", reply.status());
        Remember(update, *reply);
        live.insert(name);
        ++result.updated;
        continue;
      }
      if (reply.status().code() == absl::StatusCode::kNotFound) {
        // Deleted behind our back since the cache saw it (the garbage collector does that when the Node
        // was re-created): read the owner again and publish it again now.
        Report("update", reply.status());
        written_.erase(name);
        RecheckOwner();
        if (absl::Status s = EnsureNodeUid(); !s.ok()) {
          note(s);
          continue;
        }
        node_ref.uid = node_uid_;
        create_slice(t);
        continue;
      }
      Report("update", reply.status());
      if (informers::IsConflict(reply.status())) Refresh(name);
      note(reply.status());
    }
    generations_[pool_name] = std::max(generations_[pool_name], generation);
    published_[pool_name] = Published{generation, want, std::move(live)};
  }

  for (const auto& [name, slice] : current) {
    if (desired_names.count(name) > 0) continue;
    absl::Status s = client_->Delete(informers::ResourceSlicePath(name), slice.metadata.uid);
    if (s.code() == absl::StatusCode::kNotFound) s = absl::OkStatus();
    Report("delete", s);
    if (s.ok()) {
      written_.erase(name);
      deleted_[name] = slice.metadata.uid;
      ++result.deleted;
    } else {
      if (informers::IsConflict(s)) Refresh(name);
      note(s);
    }
  }
  if (!first_error.ok()) return first_error;
  return result;
}

}  // namespace liken::controller
