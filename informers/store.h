// The informer's cache: objects by key ("namespace/name" or "name"), with secondary indexes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"

namespace liken::informers {

// An immutable cached object, shared between the store and readers.
using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// Returns the index values of an object (e.g. the claim names a pod references).
using IndexFunc = std::function<std::vector<std::string>(const nlohmann::json&)>;

// The store key of an object: "namespace/name", or "name" for cluster-scoped objects. Thread-safe.
std::string ObjectKey(const nlohmann::json& object);

// Drops metadata.managedFields (the server's field ownership, which nothing in a cache reads: on a large
// ResourceSlice it mirrors every device and attribute); an InformerOptions::transform. Thread-compatible.
void StripManagedFields(nlohmann::json* object);

// How a Store keeps its objects.
enum class StoreEncoding {
  kTree,  // parsed: a read hands out the stored object itself
  // CBOR bytes, a fraction of a parsed tree's memory; each read parses a fresh copy (outside the lock). For a few
  // large objects read now and then: this node's ResourceSlices of a 150-device host take 0.75 MB as trees and
  // 88 kB as CBOR, and are read once per publishing pass.
  kCbor,
};

// A thread-safe map of objects with indexes.
class Store {
 public:
  explicit Store(StoreEncoding encoding = StoreEncoding::kTree) : encoding_(encoding) {}

  // Adds an index; call before the first write. Not thread-safe against concurrent writes.
  void AddIndex(const std::string& name, IndexFunc func);

  // Inserts or replaces the object under ObjectKey(*object); returns the previous one (or null). Thread-safe.
  ObjectPtr Upsert(ObjectPtr object);

  // Removes the object with `key`; returns it (or null). Thread-safe.
  ObjectPtr Remove(const std::string& key);

  // Replaces the whole content (after a list); returns the objects that were dropped. Thread-safe.
  std::vector<ObjectPtr> Replace(std::vector<ObjectPtr> objects);

  // The object with `key`, or null. Thread-safe.
  ObjectPtr Get(const std::string& key) const;

  // All objects, ordered by key. Thread-safe.
  std::vector<ObjectPtr> List() const;

  // Objects whose index `index` yields `value`, ordered by key. Empty for an unknown index. Thread-safe.
  std::vector<ObjectPtr> ByIndex(const std::string& index, const std::string& value) const;

  // Number of objects. Thread-safe.
  size_t Size() const;

  // Records the resourceVersion the content reflects (the list's, then each event's or bookmark's).
  // Thread-safe.
  void SetResourceVersion(const std::string& rv);

  // The resourceVersion last recorded ("" before the first list). Thread-safe.
  std::string ResourceVersion() const;

 private:
  // One stored object: `tree` (kTree) or `cbor` (kCbor); both null for none.
  struct Entry {
    ObjectPtr tree;
    std::shared_ptr<const std::vector<std::uint8_t>> cbor;
  };
  Entry Encode(ObjectPtr object) const;
  static ObjectPtr Decode(const Entry& entry);
  void IndexLocked(const std::string& key, const nlohmann::json* object, bool add) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StoreEncoding encoding_;
  mutable absl::Mutex mu_;
  std::map<std::string, IndexFunc> index_funcs_;
  std::map<std::string, Entry> objects_ ABSL_GUARDED_BY(mu_);
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
  // index name -> value -> keys
  std::map<std::string, std::map<std::string, std::set<std::string>>> indexes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace liken::informers
