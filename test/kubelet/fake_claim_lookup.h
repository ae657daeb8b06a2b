// A ClaimLookup over an in-memory map of ResourceClaims, with a gate to hold a lookup mid-call.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "apis/resource_claim.h"
#include "informers/claim_lookup.h"

namespace liken::testing {

// Serves claims added with Add(). Like the node's claim cache, a claim it counts as cached is served in its
// slim form (no raw JSON, parsed fields only); one that stands for an API read (held at a gate, or marked
// with Uncached) comes whole. Thread-safe.
class FakeClaimLookup : public informers::ClaimLookup {
 public:
  // Blocks lookups of one claim: `entered` fires when a lookup reaches the gate, which waits for `release`.
  struct Gate {
    absl::Notification entered;
    absl::Notification release;
  };

  // Adds or replaces a claim (parsed from its JSON; the test fails loudly on bad JSON). Thread-safe.
  void Add(const nlohmann::json& claim_json) {
    auto claim = apis::ParseResourceClaim(claim_json);
    if (!claim.ok()) std::abort();
    absl::MutexLock lock(&mu_);
    claims_[{claim->metadata.namespace_name, claim->metadata.name}] = *claim;
  }
  // From now on ns/name is not cached: GetCached fails, Get serves the whole claim (an API read). Thread-safe.
  void Uncached(const std::string& ns, const std::string& name) {
    absl::MutexLock lock(&mu_);
    uncached_.insert({ns, name});
  }
  // Removes a claim. Thread-safe.
  void Remove(const std::string& ns, const std::string& name) {
    absl::MutexLock lock(&mu_);
    claims_.erase({ns, name});
  }
  // Holds the next lookup of ns/name at a gate. Thread-safe.
  std::shared_ptr<Gate> HoldNext(const std::string& ns, const std::string& name) {
    auto gate = std::make_shared<Gate>();
    absl::MutexLock lock(&mu_);
    gates_[{ns, name}] = gate;
    return gate;
  }
  // A claim added and not held at a gate counts as cached (a held one stands for an API read); not counted
  // as a lookup. Thread-safe.
  absl::StatusOr<apis::ResourceClaim> GetCached(const std::string& ns, const std::string& name,
                                                const std::string& /*uid*/) override {
    absl::MutexLock lock(&mu_);
    auto it = claims_.find({ns, name});
    if (it == claims_.end() || gates_.count({ns, name}) > 0 || uncached_.count({ns, name}) > 0) {
      return absl::FailedPreconditionError("not cached: " + ns + "/" + name);
    }
    return Slim(it->second);
  }
  // Thread-safe.
  absl::StatusOr<apis::ResourceClaim> Get(const std::string& ns, const std::string& name,
                                          const std::string& /*uid*/) override {
    std::shared_ptr<Gate> gate;
    {
      absl::MutexLock lock(&mu_);
      ++gets_;
      auto g = gates_.find({ns, name});
      if (g != gates_.end()) {
        gate = g->second;
        gates_.erase(g);
      }
    }
    if (gate) {
      gate->entered.Notify();
      gate->release.WaitForNotification();
    }
    absl::MutexLock lock(&mu_);
    auto it = claims_.find({ns, name});
    if (it == claims_.end()) return absl::NotFoundError("resourceclaims \"" + name + "\" not found");
    if (gate || uncached_.count({ns, name}) > 0) return it->second;
    return Slim(it->second);
  }
  // How many lookups ran. Thread-safe.
  int gets() const {
    absl::MutexLock lock(&mu_);
    return gets_;
  }

 private:
  // What the node's claim cache keeps of a claim.
  static apis::ResourceClaim Slim(apis::ResourceClaim claim) {
    claim.raw = nlohmann::json::object();
    claim.metadata.raw = nlohmann::json::object();
    return claim;
  }

  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, apis::ResourceClaim> claims_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Gate>> gates_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<std::string, std::string>> uncached_ ABSL_GUARDED_BY(mu_);
  int gets_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace liken::testing
