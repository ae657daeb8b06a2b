#include "controller/claim_status_controller.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apis/resource_claim.h"
#include "common/log.h"
#include "common/rate_limiter.h"

namespace liken::controller {
namespace {

using nodestate::ClaimDevice;
using nodestate::PreparedClaimDevices;

constexpr char kReady[] = "Ready";
constexpr char kApplyPatch[] = "application/apply-patch+yaml";
constexpr int kMaxInvalidRetries = 5;
// The settle timer's key in the work queue: never a claim's key, which always holds a '/'.
constexpr char kSettleKey[] = "";

std::string Rfc3339(absl::Time t) { return absl::FormatTime("%Y-%m-%d%ET%H:%M:%SZ", t, absl::UTCTimeZone()); }

std::string KeyOf(const std::string& namespace_name, const std::string& name) {
  return absl::StrCat(namespace_name, "/", name);
}

// The entries of `driver` in `pool` among `devices`.
std::vector<apis::AllocatedDeviceStatus> Ours(std::string_view driver, std::string_view pool,
                                              const std::vector<apis::AllocatedDeviceStatus>& devices) {
  std::vector<apis::AllocatedDeviceStatus> out;
  for (const auto& d : devices) {
    if (d.driver == driver && d.pool == pool) out.push_back(d);
  }
  return out;
}

// True when both lists hold the same entries in the same states, in any order.
bool SameEntries(const std::vector<apis::AllocatedDeviceStatus>& a, const std::vector<apis::AllocatedDeviceStatus>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& x : a) {
    if (std::none_of(b.begin(), b.end(), [&](const auto& y) { return x.SameState(y); })) return false;
  }
  return true;
}

bool Allocated(const apis::ResourceClaim& claim, std::string_view driver, std::string_view pool,
               const ClaimDevice& device) {
  return std::any_of(claim.results.begin(), claim.results.end(), [&](const apis::DeviceRequestAllocationResult& r) {
    return r.driver == driver && r.pool == pool && r.device == device.device && r.share_id == device.share_id;
  });
}

}  // namespace

std::vector<apis::AllocatedDeviceStatus> DesiredDeviceStatuses(std::string_view driver, std::string_view pool,
                                                               const PreparedClaimDevices& claim,
                                                               const std::set<std::string>* present,
                                                               const std::vector<apis::AllocatedDeviceStatus>& current,
                                                               absl::Time now) {
  std::vector<apis::AllocatedDeviceStatus> out;
  for (const auto& device : claim.devices) {
    apis::AllocatedDeviceStatus entry;
    entry.driver = std::string(driver);
    entry.pool = std::string(pool);
    entry.device = device.device;
    entry.share_id = device.share_id;
    apis::DeviceCondition ready;
    ready.type = kReady;
    if (present == nullptr || present->count(device.device) > 0) {
      ready.status = "True";
      ready.reason = "Prepared";
      ready.message = "the device's /dev nodes are delivered to the claim's containers";
    } else {
      ready.status = "False";
      ready.reason = "DeviceUnplugged";
      ready.message = absl::StrCat("the device is no longer present on node ", std::string(pool),
                                   "; running containers keep the nodes they were given");
    }
    ready.last_transition_time = Rfc3339(now);
    for (const auto& c : current) {
      if (!c.SameDevice(entry)) continue;
      for (const auto& old : c.conditions) {
        if (old.type == kReady && old.status == ready.status && !old.last_transition_time.empty()) {
          ready.last_transition_time = old.last_transition_time;
        }
      }
    }
    entry.conditions.push_back(std::move(ready));
    entry.data = {{"devicePaths", device.dev_paths}};
    out.push_back(std::move(entry));
  }
  return out;
}

ClaimStatusController::ClaimStatusController(std::string driver, std::string pool, informers::KubeClient* client,
                                             informers::ClaimLookup* claims, Clock* clock,
                                             ClaimStatusObserver* observer)
    : driver_(std::move(driver)),
      pool_(std::move(pool)),
      client_(client),
      claims_(claims),
      clock_(clock),
      observer_(observer),
      queue_(clock, NewControllerRateLimiter(clock, absl::Milliseconds(50), absl::Seconds(60), 10, 100)) {}

ClaimStatusController::~ClaimStatusController() { Stop(); }

void ClaimStatusController::SetPrepared(PreparedClaimDevices claim) {
  const std::string key = KeyOf(claim.namespace_name, claim.name);
  {
    absl::MutexLock lock(&mu_);
    prepared_[key] = std::move(claim);
  }
  AddSettling(key);
}

void ClaimStatusController::SetUnprepared(const std::string& namespace_name, const std::string& name,
                                          const std::string& uid) {
  const std::string key = KeyOf(namespace_name, name);
  {
    absl::MutexLock lock(&mu_);
    auto it = prepared_.find(key);
    if (it != prepared_.end() && it->second.uid == uid) prepared_.erase(it);
  }
  AddSettling(key);
}

void ClaimStatusController::AddSettling(const std::string& key) {
  const absl::Time now = clock_->Now();
  {
    absl::MutexLock lock(&mu_);
    if (settling_.empty()) burst_start_ = now;
    settling_.insert(key);
    last_change_ = now;
  }
  // A timer already armed keeps its earlier time; Settle then arms it again for the burst's end.
  queue_.AddAfter(kSettleKey, kQuietWindow);
}

void ClaimStatusController::Settle() {
  std::set<std::string> settled;
  absl::Duration wait;
  {
    absl::MutexLock lock(&mu_);
    if (settling_.empty()) return;
    const absl::Time due = std::min(last_change_ + kQuietWindow, burst_start_ + kMaxSettleDelay);
    wait = due - clock_->Now();
    if (wait <= absl::ZeroDuration()) settled.swap(settling_);
  }
  if (settled.empty()) {
    queue_.AddAfter(kSettleKey, wait);
    return;
  }
  for (const auto& key : settled) queue_.Add(key);
}

void ClaimStatusController::SetPresentDevices(std::set<std::string> names) {
  std::vector<std::string> changed;
  {
    absl::MutexLock lock(&mu_);
    const std::set<std::string>* before = present_ ? &*present_ : nullptr;  // null: all were present
    for (const auto& [key, claim] : prepared_) {
      for (const auto& d : claim.devices) {
        bool was = before == nullptr || before->count(d.device) > 0;
        if (was != (names.count(d.device) > 0)) {
          changed.push_back(key);
          break;
        }
      }
    }
    present_ = std::move(names);
  }
  for (const auto& key : changed) queue_.Add(key);
}

void ClaimStatusController::Start() {
  absl::MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  worker_ = std::jthread([this] {
    while (ProcessOne(queue_.Get())) {
    }
  });
}

void ClaimStatusController::Stop() {
  queue_.ShutDown();
  if (worker_.joinable()) worker_.join();
}

int ClaimStatusController::DrainForTest() {
  int n = 0;
  while (auto key = queue_.TryGet()) {
    if (*key != kSettleKey) ++n;
    ProcessOne(key);
  }
  return n;
}

std::vector<std::string> ClaimStatusController::PreparedKeys() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, claim] : prepared_) keys.push_back(key);
  return keys;
}

bool ClaimStatusController::ProcessOne(std::optional<std::string> key) {
  if (!key) return false;
  if (*key == kSettleKey) {
    Settle();
    queue_.Done(*key);
    return true;
  }
  absl::Status s = Sync(*key);
  const absl::StatusCode code = s.code();
  if (s.ok()) {
    queue_.Forget(*key);
  } else if (code == absl::StatusCode::kUnimplemented ||
             ((code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kFailedPrecondition) &&
              queue_.NumRequeues(*key) >= kMaxInvalidRetries)) {
    // A refused write (422: the claim changed under its name, or the per-driver authorization failed) may
    // heal (RBAC being applied), and a claim not yet in the node's cache may arrive, so each is retried a few
    // times; then it waits for the next change.
    LogWarning("claim status: cannot write the claim's device status; dropped until it changes",
               {{"claim", *key}, {"error", s.ToString()}});
    queue_.Forget(*key);
  } else {
    // The few retries of a refusal that may heal are logged once, when they give up (above).
    const bool may_heal = code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kFailedPrecondition;
    Log(may_heal ? LogLevel::kDebug : LogLevel::kWarning, "claim status: write failed; retrying",
        {{"claim", *key}, {"error", s.ToString()}});
    queue_.AddRateLimited(*key);
  }
  queue_.Done(*key);
  return true;
}

absl::Status ClaimStatusController::Sync(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return absl::InvalidArgumentError("claim key without a namespace: " + key);
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  std::optional<PreparedClaimDevices> wanted;
  std::optional<std::set<std::string>> present;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = prepared_.find(key); it != prepared_.end()) wanted = it->second;
    present = present_;
  }
  // From the node's claim cache only: a status write must not cost a read. The kubelet prepares a claim for a
  // pod bound to this node, whose claims the cache holds; one it lacks (not yet listed) is retried a few times.
  auto claim = claims_->GetCached(ns, name, "");  // any UID: a replaced claim is told apart below
  if (!claim.ok() && claim.status().code() == absl::StatusCode::kFailedPrecondition && !wanted) {
    // Unprepared and no longer cached: no pod on this node names it any more; the API server drops our entries
    // when the claim is deallocated.
    return absl::OkStatus();
  }
  if (!claim.ok()) return claim.status();
  const std::vector<apis::AllocatedDeviceStatus> current = Ours(driver_, pool_, claim->devices);
  std::vector<apis::AllocatedDeviceStatus> desired;
  if (wanted) {
    if (claim->metadata.uid != wanted->uid) return absl::OkStatus();  // the prepared claim is gone
    PreparedClaimDevices allocated = *wanted;
    // Only devices the claim (still) allocates may have an entry: the server refuses others.
    std::erase_if(allocated.devices, [&](const ClaimDevice& d) { return !Allocated(*claim, driver_, pool_, d); });
    desired = DesiredDeviceStatuses(driver_, pool_, allocated, present ? &*present : nullptr, current,
                                    clock_->Now());
  }
  if (SameEntries(current, desired)) return absl::OkStatus();  // idle: no write
  return Apply(ns, name, claim->metadata.uid, desired);
}

absl::Status ClaimStatusController::Apply(const std::string& namespace_name, const std::string& name,
                                          const std::string& uid,
                                          const std::vector<apis::AllocatedDeviceStatus>& entries) {
  // Server-side apply of the status subresource as field manager `driver_`: the server merges the entries by
  // their keys (driver, pool, device, shareID), keeps every other driver's entries, and removes those this
  // manager applied before and no longer lists. The UID makes it a precondition: a claim recreated under
  // the name is not written (409).
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& e : entries) devices.push_back(apis::ToJson(e));
  nlohmann::json body = {{"apiVersion", "resource.k8s.io/v1"},
                         {"kind", "ResourceClaim"},
                         {"metadata", {{"name", name}, {"namespace", namespace_name}, {"uid", uid}}},
                         {"status", {{"devices", std::move(devices)}}}};
  auto stored = client_->Patch(informers::ResourceClaimStatusPath(namespace_name, name),
                               absl::StrCat("fieldManager=", driver_, "&force=true"), kApplyPatch, body);
  if (stored.status().code() == absl::StatusCode::kNotFound) return absl::OkStatus();  // deleted meanwhile
  if (!stored.ok()) {
    if (observer_ != nullptr) observer_->OnClaimStatusWrite(informers::IsConflict(stored.status()) ? "conflict" : "error");
    return stored.status();
  }
  if (observer_ != nullptr) observer_->OnClaimStatusWrite("success");
  LogInfo("claim status written",
          {{"claim", KeyOf(namespace_name, name)}, {"entries", absl::StrCat(entries.size())}});
  if (auto parsed = apis::ParseResourceClaim(*stored); parsed.ok()) claims_->Remember(*parsed);
  return absl::OkStatus();
}

}  // namespace liken::controller
