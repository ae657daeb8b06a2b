// The driver's own recent slice writes, laid over an informer cache that has not seen them yet (what
// client-go calls a mutation cache).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "apis/resource_slice.h"

namespace liken::controller {

// Parses a resourceVersion as a number (etcd's are); -1 when it is not one. Thread-safe.
int64_t ResourceVersionNumber(const std::string& rv);

// Remembers what this process wrote and deleted until the informer's cache shows it. Not thread-safe:
// owned by one SliceSync and used from the thread that calls Sync.
class SliceWriteCache {
 public:
  // Records a create or update: `sent` is the object asked for, `reply` the server's answer. A reply
  // that does not parse as a ResourceSlice forgets the slice instead.
  void RecordWrite(const apis::ResourceSlice& sent, const nlohmann::json& reply);

  // Records a slice as just read from the server (after a conflict): newer than the cache's copy.
  void RecordRead(const apis::ResourceSlice& fresh);

  // Records the delete of `name` whose uid was `uid`: hidden from the cache's view while the cache
  // still holds that uid.
  void RecordDelete(const std::string& name, const std::string& uid);

  // Forgets any write recorded for `name` (a delete record stays).
  void Forget(const std::string& name);

  // Lays the records over `slices` (the cache's view by name; `cache_resource_version` the cache's list
  // resourceVersion): deleted slices are hidden, a written slice replaces an older cached copy or is
  // added while the cache has not reached its resourceVersion. A record the cache caught up with (or
  // passed, or cannot be compared with) is dropped: from then on the cache wins.
  void Overlay(const std::string& cache_resource_version, std::map<std::string, apis::ResourceSlice>* slices);

  // What to compare the desired devices with: what we sent, when `have` is exactly the server's answer
  // to our last write of it (a server that drops a field it does not know must not cause another
  // write); otherwise `have` itself.
  const apis::ResourceSlice& AsSent(const apis::ResourceSlice& have) const;

  // How many writes and deletes are remembered (for tests).
  size_t writes() const { return written_.size(); }
  size_t deletes() const { return deleted_.size(); }

 private:
  struct Written {
    std::string resource_version;  // of the server's reply
    apis::ResourceSlice sent;      // what we asked for
    apis::ResourceSlice stored;    // what came back
  };

  std::map<std::string, Written> written_;      // by slice name
  std::map<std::string, std::string> deleted_;  // slice name -> the uid we deleted
};

}  // namespace liken::controller
