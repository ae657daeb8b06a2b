#include "informers/claim_cache.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <stop_token>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/rate_limiter.h"

namespace liken::informers {
namespace {

constexpr char kClaimsIndex[] = "claims";

std::string StringAt(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// Keeps only what the cache reads of a pod: identity and the claims it names (spec, template and
// extended-resource claims).
void SlimPod(nlohmann::json* pod) {
  if (!pod->is_object()) return;
  nlohmann::json slim = nlohmann::json::object();
  if (auto m = pod->find("metadata"); m != pod->end() && m->is_object()) {
    for (const char* key : {"name", "namespace", "uid", "resourceVersion"}) {
      if (auto v = m->find(key); v != m->end()) slim["metadata"][key] = std::move(*v);
    }
  }
  if (auto spec = pod->find("spec"); spec != pod->end() && spec->is_object()) {
    for (const char* key : {"nodeName", "resourceClaims"}) {
      if (auto v = spec->find(key); v != spec->end()) slim["spec"][key] = std::move(*v);
    }
  }
  if (auto status = pod->find("status"); status != pod->end() && status->is_object()) {
    for (const char* key : {"resourceClaimStatuses", "extendedResourceClaimStatus"}) {
      if (auto v = status->find(key); v != status->end()) slim["status"][key] = std::move(*v);
    }
  }
  *pod = std::move(slim);
}

InformerOptions PodInformerOptions(const std::string& node_name) {
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  options.field_selector = "spec.nodeName=" + node_name;
  options.transform = SlimPod;
  return options;
}

// The cached form of a claim: the parsed fields only (the raw JSON is most of the memory).
std::shared_ptr<const apis::ResourceClaim> Slim(apis::ResourceClaim claim) {
  claim.raw = nlohmann::json::object();
  claim.metadata.raw = nlohmann::json::object();
  return std::make_shared<const apis::ResourceClaim>(std::move(claim));
}

// OK when a claim could have this namespace and name (so the API path built from them names it).
absl::Status ValidateClaimName(const std::string& namespace_name, const std::string& name) {
  if (absl::Status s = ValidateDnsLabel(namespace_name); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("claim namespace: ", s.message()));
  }
  if (absl::Status s = ValidateDnsSubdomain(name); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("claim: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> ClaimKeysOfPod(const nlohmann::json& pod) {
  std::set<std::string> keys;
  if (!pod.is_object()) return {};
  std::string ns = StringAt(pod.value("metadata", nlohmann::json::object()), "namespace");
  if (ns.empty()) return {};
  auto add_from = [&](const nlohmann::json& parent, const char* list) {
    if (!parent.is_object()) return;
    auto it = parent.find(list);
    if (it == parent.end() || !it->is_array()) return;
    for (const auto& entry : *it) {
      std::string claim = StringAt(entry, "resourceClaimName");
      if (!claim.empty()) keys.insert(ns + "/" + claim);
    }
  };
  add_from(pod.value("spec", nlohmann::json::object()), "resourceClaims");
  const nlohmann::json status = pod.value("status", nlohmann::json::object());
  add_from(status, "resourceClaimStatuses");
  // The claim the scheduler made for the pod's extended resources (one object, not a list).
  if (status.is_object()) {
    if (auto e = status.find("extendedResourceClaimStatus"); e != status.end()) {
      std::string claim = StringAt(*e, "resourceClaimName");
      if (!claim.empty()) keys.insert(ns + "/" + claim);
    }
  }
  return {keys.begin(), keys.end()};
}

ClaimCache::ClaimCache(KubeClient* client, Clock* clock, const std::string& node_name,
                       InformerObserver* observer, absl::Duration fetch_wait)
    : client_(client),
      observer_(observer),
      clock_(clock),
      fetch_wait_(fetch_wait),
      pods_(client, clock, PodInformerOptions(node_name), this, observer),
      queue_(clock, NewExponentialRateLimiter(absl::Milliseconds(50), absl::Seconds(30))) {
  pods_.store()->AddIndex(kClaimsIndex, [](const nlohmann::json& pod) { return ClaimKeysOfPod(pod); });
}

ClaimCache::~ClaimCache() { Stop(); }

void ClaimCache::Start() {
  pods_.Start();
  worker_ = std::jthread([this](std::stop_token stop) {
    std::stop_callback shut_down(stop, [this] { queue_.ShutDown(); });  // wakes Get
    while (ProcessOne(queue_.Get())) {
    }
  });
}

void ClaimCache::Stop() {
  {
    absl::MutexLock lock(&mu_);  // wakes every Get waiting for a fetch
    stopped_ = true;
  }
  pods_.Stop();
  queue_.ShutDown();  // also when no worker was started
  worker_.request_stop();
  if (worker_.joinable()) worker_.join();
}

bool ClaimCache::ProcessOne(std::optional<std::string> key) {
  if (!key) return false;
  absl::Status s = SyncClaim(*key);
  if (s.ok()) {
    queue_.Forget(*key);
  } else {
    LogWarning("claim cache: fetching claim failed; retrying", {{"claim", *key}, {"error", s.ToString()}});
    queue_.AddRateLimited(*key);
  }
  queue_.Done(*key);
  // After Done: a Get that finds the key no longer pending has the fetch's result in the cache already.
  absl::MutexLock lock(&mu_);  // a Get waiting for this claim looks at what the fetch brought
  if (auto it = waiting_.find(*key); it != waiting_.end()) ++it->second.fetches_ended;
  return true;
}

void ClaimCache::DrainForTest() {
  while (auto key = queue_.TryGet()) ProcessOne(key);
}

bool ClaimCache::WaitForSync() { return pods_.WaitForSync(); }

void ClaimCache::Enqueue(const ObjectPtr& pod) {
  if (pod == nullptr) return;
  for (const auto& key : ClaimKeysOfPod(*pod)) queue_.Add(key);
}

void ClaimCache::OnAdd(const ObjectPtr& pod) { Enqueue(pod); }

void ClaimCache::OnUpdate(const ObjectPtr& old_pod, const ObjectPtr& new_pod) {
  // Most pod updates are status changes that name the same claims: fetching those again would cost one
  // GET per claim per update. Only what changed is queued: claims it no longer names (may be dropped),
  // claims it names now (fetched), and claims not cached or not allocated yet (read again).
  std::vector<std::string> old_keys = old_pod != nullptr ? ClaimKeysOfPod(*old_pod) : std::vector<std::string>{};
  std::vector<std::string> new_keys = new_pod != nullptr ? ClaimKeysOfPod(*new_pod) : std::vector<std::string>{};
  std::vector<std::string> queue;
  std::set_symmetric_difference(old_keys.begin(), old_keys.end(), new_keys.begin(), new_keys.end(),
                                std::back_inserter(queue));
  {
    absl::MutexLock lock(&mu_);
    for (const auto& key : new_keys) {
      if (std::binary_search(old_keys.begin(), old_keys.end(), key)) {
        auto it = claims_.find(key);
        if (it == claims_.end() || !it->second->allocated) queue.push_back(key);
      }
    }
  }
  for (const auto& key : queue) queue_.Add(key);
}

void ClaimCache::OnDelete(const ObjectPtr& pod) { Enqueue(pod); }

bool ClaimCache::UsedByPodOnNode(const std::string& key) const {
  return !pods_.store()->ByIndex(kClaimsIndex, key).empty();
}

absl::Status ClaimCache::SyncClaim(const std::string& key) {
  // Every way out but a failed request (retried: a fetch is queued again) records what the fetch left in the cache.
  const auto ended_absent = [&] {
    absl::MutexLock lock(&mu_);
    claims_.erase(key);
    fetched_absent_.insert(key);
  };
  if (!UsedByPodOnNode(key)) {
    absl::MutexLock lock(&mu_);
    claims_.erase(key);
    fetched_absent_.erase(key);
    return absl::OkStatus();
  }
  auto slash = key.find('/');
  if (slash == std::string::npos) return absl::OkStatus();
  if (absl::Status s = ValidateClaimName(key.substr(0, slash), key.substr(slash + 1)); !s.ok()) {
    LogWarning("claim cache: a pod names a claim that cannot exist; ignoring it", {{"error", s.ToString()}});
    ended_absent();
    return absl::OkStatus();  // retrying will not fix it
  }
  auto got = client_->Get(ResourceClaimPath(key.substr(0, slash), key.substr(slash + 1)));
  if (got.status().code() == absl::StatusCode::kNotFound) {
    ended_absent();
    return absl::OkStatus();  // the pod names a claim that is not there (yet); a pod update brings it back
  }
  if (!got.ok()) return got.status();
  auto claim = apis::ParseResourceClaim(*got);
  if (!claim.ok()) {
    LogWarning("claim cache: malformed ResourceClaim", {{"claim", key}, {"error", claim.status().ToString()}});
    ended_absent();
    return absl::OkStatus();  // retrying will not fix it; a Get falls back to the server and reports it
  }
  // The pod may have gone while we fetched.
  bool used = UsedByPodOnNode(key);
  absl::MutexLock lock(&mu_);
  fetched_absent_.erase(key);
  if (used) {
    StoreLocked(key, *std::move(claim));
  } else {
    claims_.erase(key);
  }
  return absl::OkStatus();
}

const apis::ResourceClaim* ClaimCache::UsableLocked(const std::string& key, const std::string& uid) const {
  auto it = claims_.find(key);
  if (it != claims_.end() && it->second->allocated && (uid.empty() || it->second->metadata.uid == uid)) {
    return it->second.get();
  }
  return nullptr;
}

absl::StatusOr<apis::ResourceClaim> ClaimCache::GetCached(const std::string& namespace_name,
                                                          const std::string& name, const std::string& uid) {
  if (absl::Status s = ValidateClaimName(namespace_name, name); !s.ok()) return s;
  const std::string key = namespace_name + "/" + name;
  absl::MutexLock lock(&mu_);
  if (const apis::ResourceClaim* claim = UsableLocked(key, uid)) return *claim;
  return absl::FailedPreconditionError(absl::StrCat("claim ", key, " is not in this node's claim cache"));
}

absl::StatusOr<std::optional<apis::ResourceClaim>> ClaimCache::AwaitFetch(const std::string& key,
                                                                          const std::string& uid) {
  absl::MutexLock lock(&mu_);
  if (stopped_) return absl::CancelledError("the claim cache stopped");
  if (const apis::ResourceClaim* claim = UsableLocked(key, uid)) return *claim;  // fetched meanwhile
  // Waited for only while a fetch is coming: the key is queued or being fetched, or the cache has no copy at all yet
  // and no fetch of it ended (the pod's event is being handled). A copy of another UID or an unallocated one that
  // nothing fetches again (the pod did not change), or no copy after a fetch found none (NotFound erased it), is read
  // at once.
  if ((claims_.contains(key) || fetched_absent_.contains(key)) && !queue_.Pending(key)) return std::nullopt;
  Waiting& waiting = waiting_[key];  // std::map: the reference stays valid while other keys come and go
  ++waiting.waiters;
  const uint64_t ended_before = waiting.fetches_ended;
  // Any fetch that ends from now on counts, also one under way already: the pod event queued it, and the kubelet's
  // prepare for the pod came while it was in flight.
  const auto fetched = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopped_ || waiting.fetches_ended > ended_before || UsableLocked(key, uid) != nullptr;
  };
  clock_->AwaitWithDeadline(&mu_, absl::Condition(&fetched), clock_->Now() + fetch_wait_);
  std::optional<apis::ResourceClaim> out;
  if (const apis::ResourceClaim* claim = UsableLocked(key, uid)) out = *claim;
  const bool stopped = stopped_;
  if (--waiting.waiters == 0) waiting_.erase(key);
  if (stopped && !out) return absl::CancelledError("the claim cache stopped");
  return out;
}

absl::StatusOr<apis::ResourceClaim> ClaimCache::Get(const std::string& namespace_name, const std::string& name,
                                                    const std::string& uid) {
  auto cached = GetCached(namespace_name, name, uid);
  if (cached.ok() || cached.status().code() != absl::StatusCode::kFailedPrecondition) return cached;
  const std::string key = namespace_name + "/" + name;
  // A claim a pod on this node names is fetched by the worker (queued by the pod's event): wait for that fetch
  // rather than read the claim a second time. Only a claim no such pod names is read at once.
  if (fetch_wait_ > absl::ZeroDuration() && UsedByPodOnNode(key)) {
    auto fetched = AwaitFetch(key, uid);
    if (!fetched.ok()) return fetched.status();
    if (fetched->has_value()) return **std::move(fetched);
  }
  if (observer_ != nullptr) observer_->OnClaimGetFallback();
  auto got = client_->Get(ResourceClaimPath(namespace_name, name));
  if (!got.ok()) return got.status();
  auto claim = apis::ParseResourceClaim(*got);
  if (!claim.ok()) return claim.status();
  if (UsedByPodOnNode(key)) {
    {
      absl::MutexLock lock(&mu_);
      claims_[key] = Slim(*claim);
    }
    // The pod may go between the check and the insert (its deletion's key already handled): the worker
    // checks the usage again, so the claim is not kept forever.
    queue_.Add(key);
  }
  return claim;
}

void ClaimCache::Remember(const apis::ResourceClaim& claim) {
  const std::string key = claim.metadata.namespace_name + "/" + claim.metadata.name;
  if (!UsedByPodOnNode(key)) return;
  absl::MutexLock lock(&mu_);
  StoreLocked(key, claim);
}

void ClaimCache::StoreLocked(const std::string& key, apis::ResourceClaim claim) {
  auto it = claims_.find(key);
  if (it != claims_.end() && it->second->metadata.uid == claim.metadata.uid) {
    uint64_t cached = 0, offered = 0;
    if (absl::SimpleAtoi(it->second->metadata.resource_version, &cached) &&
        absl::SimpleAtoi(claim.metadata.resource_version, &offered) && cached > offered) {
      return;  // a write's answer or a fetch already brought a newer copy
    }
  }
  claims_[key] = Slim(std::move(claim));
}

std::vector<std::string> ClaimCache::CachedKeys() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, claim] : claims_) keys.push_back(key);
  return keys;
}

}  // namespace liken::informers
