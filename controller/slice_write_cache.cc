#include "controller/slice_write_cache.h"

#include "absl/strings/numbers.h"

namespace liken::controller {

int64_t ResourceVersionNumber(const std::string& rv) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(rv, &n) || n < 0) return -1;
  return n;
}

void SliceWriteCache::RecordWrite(const apis::ResourceSlice& sent, const nlohmann::json& reply) {
  auto stored = apis::ParseResourceSlice(reply);
  if (!stored.ok()) {
    written_.erase(sent.metadata.name);
    return;
  }
  std::string rv = stored->metadata.resource_version;
  written_[sent.metadata.name] = Written{std::move(rv), sent, *std::move(stored)};
}

void SliceWriteCache::RecordRead(const apis::ResourceSlice& fresh) {
  written_[fresh.metadata.name] = Written{fresh.metadata.resource_version, fresh, fresh};
}

void SliceWriteCache::RecordDelete(const std::string& name, const std::string& uid) {
  written_.erase(name);
  deleted_[name] = uid;
}

void SliceWriteCache::Forget(const std::string& name) { written_.erase(name); }

void SliceWriteCache::Overlay(const std::string& cache_resource_version,
                              std::map<std::string, apis::ResourceSlice>* slices) {
  // Hide what we deleted until the cache agrees.
  for (auto it = deleted_.begin(); it != deleted_.end();) {
    auto c = slices->find(it->first);
    if (c != slices->end() && c->second.metadata.uid == it->second) {
      slices->erase(c);
      ++it;
    } else {
      it = deleted_.erase(it);
    }
  }
  // Lay our writes over a cache that has not caught up.
  const int64_t cache_rv = ResourceVersionNumber(cache_resource_version);
  for (auto it = written_.begin(); it != written_.end();) {
    auto c = slices->find(it->first);
    const int64_t ours = ResourceVersionNumber(it->second.resource_version);
    if (c != slices->end()) {
      const int64_t theirs = ResourceVersionNumber(c->second.metadata.resource_version);
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
      (*slices)[it->first] = it->second.stored;
    }
    ++it;
  }
}

const apis::ResourceSlice& SliceWriteCache::AsSent(const apis::ResourceSlice& have) const {
  auto it = written_.find(have.metadata.name);
  if (it != written_.end() && it->second.resource_version == have.metadata.resource_version) return it->second.sent;
  return have;
}

}  // namespace liken::controller
