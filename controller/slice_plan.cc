#include "controller/slice_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "controller/pool_generation.h"

namespace liken::controller {
namespace {

bool IsNodeRef(const apis::OwnerReference& ref) { return ref.kind == "Node" && ref.api_version == "v1"; }

// `ignore_sharing`: the server drops allowMultipleAllocations, so a difference in it alone is no reason to write.
bool SameDevices(const apis::ResourceSlice& want, const apis::ResourceSlice& have, bool ignore_sharing = false) {
  if (want.devices.size() != have.devices.size()) return false;
  for (size_t i = 0; i < want.devices.size(); ++i) {
    if (ignore_sharing) {
      apis::SliceDevice w = want.devices[i];
      w.allow_multiple_allocations = have.devices[i].allow_multiple_allocations;
      if (!w.SameContent(have.devices[i])) return false;
    } else if (!want.devices[i].SameContent(have.devices[i])) {
      return false;
    }
  }
  return true;
}

// The same slices by name, with the same devices, in the same order.
bool SameContent(const std::vector<apis::ResourceSlice>& a, const std::vector<apis::ResourceSlice>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].metadata.name != b[i].metadata.name || !SameDevices(a[i], b[i])) return false;
  }
  return true;
}

// A new object for `target`: no server fields, owned by the Node.
apis::ResourceSlice NewSliceObject(const apis::ResourceSlice& target, const apis::OwnerReference& owner) {
  apis::ResourceSlice create = target;
  create.raw = nlohmann::json::object();
  create.metadata = apis::ObjectMeta{};
  create.metadata.name = target.metadata.name;
  create.metadata.labels = target.metadata.labels;
  create.metadata.owner_references = {owner};
  return create;
}

}  // namespace

SliceAction PlanSliceAction(const SlicePlanContext& context, const apis::ResourceSlice& target,
                            const apis::ResourceSlice* have, const SliceWriteCache& writes) {
  SliceAction action;
  action.target = target;
  action.have = have;
  action.owner_uid = context.owner.uid;
  if (have == nullptr) {
    action.kind = SliceAction::Kind::kCreate;
    action.body = NewSliceObject(target, context.owner);
    return action;
  }
  const auto& refs = have->metadata.owner_references;
  const bool has_owner = std::find(refs.begin(), refs.end(), context.owner) != refs.end();
  if (SameDevices(target, writes.AsSent(*have), context.server_drops_sharing) &&
      have->pool.name == target.pool.name &&
      have->pool.generation == target.pool.generation &&
      have->pool.resource_slice_count == target.pool.resource_slice_count && have->driver == context.driver &&
      have->node_name == context.node_name && has_owner) {
    action.kind = SliceAction::Kind::kKeep;
    return action;
  }
  action.kind = SliceAction::Kind::kUpdate;
  apis::ResourceSlice update = *have;  // keeps unknown fields and resourceVersion
  update.driver = context.driver;
  update.node_name = context.node_name;
  update.pool = target.pool;
  update.devices = target.devices;
  std::vector<apis::OwnerReference> owners = {context.owner};
  for (const auto& r : refs) {
    if (!IsNodeRef(r)) owners.push_back(r);
  }
  update.metadata.owner_references = std::move(owners);
  action.body = std::move(update);
  return action;
}

SlicePlan PlanSlices(const SlicePlanContext& context, std::vector<apis::ResourceSlice> desired,
                     const std::map<std::string, apis::ResourceSlice>& current, const SliceWriteCache& writes,
                     const std::map<std::string, PublishedPool>& published,
                     const std::set<std::string>& pools_deleted_behind) {
  std::map<std::string, std::vector<apis::ResourceSlice>> pools;  // pool -> desired slices, in order
  std::set<std::string> desired_names;
  for (auto& slice : desired) {
    desired_names.insert(slice.metadata.name);
    pools[slice.pool.name].push_back(std::move(slice));
  }

  SlicePlan plan;
  for (auto& [pool_name, want] : pools) {
    const int64_t count = static_cast<int64_t>(want.size());
    PoolGenerationFacts facts;
    int64_t have_count = 0;
    for (const auto& [name, slice] : current) {
      if (slice.pool.name != pool_name) continue;
      ++have_count;
      facts.server_generation = std::max(facts.server_generation, slice.pool.generation);
    }
    bool content_same = have_count == count;
    for (const auto& w : want) {
      auto c = current.find(w.metadata.name);
      if (c == current.end() || c->second.pool.name != pool_name ||
          !SameDevices(w, writes.AsSent(c->second), context.server_drops_sharing)) {
        content_same = false;
      }
    }
    facts.server_matches = content_same && have_count > 0;
    if (auto pub = published.find(pool_name); pub != published.end()) {
      facts.highest_published = pub->second.highest_generation;
      if (pools_deleted_behind.count(pool_name) == 0 && SameContent(want, pub->second.content)) {
        facts.unfinished_generation = pub->second.generation;
      }
    }

    PoolPlan pool;
    pool.pool = pool_name;
    pool.generation = PickPoolGeneration(facts);
    // Build and validate the whole pool before planning any write of it.
    std::vector<apis::ResourceSlice> targets;
    for (const auto& w : want) {
      apis::ResourceSlice t = w;
      t.driver = context.driver;
      t.node_name = context.node_name;
      t.pool.name = pool_name;
      t.pool.generation = pool.generation;
      t.pool.resource_slice_count = count;
      if (absl::Status s = apis::ValidateResourceSlice(t); !s.ok()) {
        pool.invalid = absl::InvalidArgumentError(absl::StrCat("pool ", pool_name, ": ", s.message()));
        targets.clear();
        break;
      }
      targets.push_back(std::move(t));
    }
    for (const auto& t : targets) {
      auto c = current.find(t.metadata.name);
      pool.actions.push_back(PlanSliceAction(context, t, c == current.end() ? nullptr : &c->second, writes));
    }
    pool.content = std::move(want);
    plan.pools.push_back(std::move(pool));
  }

  for (const auto& [name, slice] : current) {
    if (desired_names.count(name) == 0) plan.deletes.push_back(slice);
  }
  return plan;
}

}  // namespace liken::controller
