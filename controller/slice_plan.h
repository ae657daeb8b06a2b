// Plans one slice sync pass: from the desired slices and the server's (as the cache and our own writes
// show it), which slices to create, update, keep and delete, and under which pool generation.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "apis/resource_slice.h"
#include "controller/slice_write_cache.h"

namespace liken::controller {

// What this process last published of one pool.
struct PublishedPool {
  int64_t generation = 0;                    // the generation it went out under
  int64_t highest_generation = 0;            // the highest generation ever published for the pool
  std::vector<apis::ResourceSlice> content;  // the desired slices (names, devices), in order
  std::set<std::string> live;                // the slices known written under `generation`
};

// Who publishes: the slices' driver, node and owner.
struct SlicePlanContext {
  std::string driver;
  std::string node_name;
  apis::OwnerReference owner;  // the Node (its UID)
  bool server_drops_sharing = false;  // the server drops allowMultipleAllocations: differences in it are ignored
};

// What to do with one desired slice.
struct SliceAction {
  enum class Kind { kKeep, kCreate, kUpdate };
  Kind kind = Kind::kKeep;
  apis::ResourceSlice target;                  // the complete slice to publish (validated)
  apis::ResourceSlice body;                    // create: the new object; update: `have` with the new spec
  const apis::ResourceSlice* have = nullptr;   // the server's slice (points into the planner's `current`)
  std::string owner_uid;                       // the owner UID `body` and the keep decision assumed
};

// The plan for one pool.
struct PoolPlan {
  std::string pool;
  int64_t generation = 0;
  std::vector<apis::ResourceSlice> content;  // the desired slices as given (for PublishedPool)
  absl::Status invalid;                      // not OK: the pool fails validation and nothing of it is written
  std::vector<SliceAction> actions;          // one per desired slice, in order; empty when `invalid`
};

// Everything one pass should write.
struct SlicePlan {
  std::vector<PoolPlan> pools;               // by pool name
  std::vector<apis::ResourceSlice> deletes;  // slices on the server that are no longer desired
};

// Decides what to do with `target` given the server's copy `have` (null when it has none): keep it when
// devices (as we sent them, see SliceWriteCache::AsSent; allowMultipleAllocations ignored where
// `context.server_drops_sharing`), pool, driver, node and owner already match;
// else update over `have` (unknown fields, resourceVersion and foreign owners kept); else create it
// fresh, owned by the Node. Thread-safe (pure).
SliceAction PlanSliceAction(const SlicePlanContext& context, const apis::ResourceSlice& target,
                            const apis::ResourceSlice* have, const SliceWriteCache& writes);

// Plans a pass. `desired` are the slices to publish (names, pools, devices); `current` the server's
// slices by name after the overlay of our writes; `published` what earlier passes published, by pool;
// `pools_deleted_behind` the pools of which a slice we published has disappeared. Each pool's
// generation comes from PickPoolGeneration; each pool is validated whole before any of it is planned.
// The plan points into `current`, which must outlive it. Thread-safe (pure).
SlicePlan PlanSlices(const SlicePlanContext& context, std::vector<apis::ResourceSlice> desired,
                     const std::map<std::string, apis::ResourceSlice>& current, const SliceWriteCache& writes,
                     const std::map<std::string, PublishedPool>& published,
                     const std::set<std::string>& pools_deleted_behind);

}  // namespace liken::controller
