// An in-memory API server behind the KubeClient interface: records every request, lets a test prepend
// failures, and mimics the server's bookkeeping (uid, resourceVersion, conflicts, field selectors).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "informers/kube_client.h"

namespace liken::testing {

// One request the fake received.
struct RecordedRequest {
  std::string verb;  // GET, LIST, CREATE, UPDATE, DELETE, WATCH
  std::string path;
  nlohmann::json body;  // the object sent (CREATE, UPDATE), else null
};

// Fake KubeClient. Thread-safe.
class FakeKubeClient final : public informers::KubeClient {
 public:
  // Called on each object the fake stores through Create/Update, to mimic server-side defaulting or
  // dropped fields.
  using Mutator = std::function<void(nlohmann::json*)>;

  absl::StatusOr<nlohmann::json> Get(const std::string& path) override {
    absl::MutexLock lock(&mu_);
    Record("GET", path, nullptr);
    if (auto f = TakeFailure("GET", path)) return *f;
    auto it = objects_.find(path);
    if (it == objects_.end()) return informers::StatusFromHttp(404, R"({"reason":"NotFound","message":"not found"})");
    return it->second;
  }

  absl::StatusOr<nlohmann::json> List(const std::string& path, const informers::RequestOptions& options,
                                      std::stop_token) override {
    absl::MutexLock lock(&mu_);
    Record("LIST", path, nullptr);
    if (auto f = TakeFailure("LIST", path)) return *f;
    nlohmann::json items = nlohmann::json::array();
    for (const auto& [p, obj] : objects_) {
      if (p.rfind(path + "/", 0) == 0 && p.find('/', path.size() + 1) == std::string::npos &&
          MatchesFieldSelector(obj, options.field_selector)) {
        items.push_back(obj);
      }
    }
    return nlohmann::json{{"kind", "List"}, {"metadata", {{"resourceVersion", std::to_string(rv_)}}}, {"items", items}};
  }

  absl::StatusOr<nlohmann::json> Create(const std::string& path, const nlohmann::json& object) override {
    absl::MutexLock lock(&mu_);
    Record("CREATE", path, &object);
    if (auto f = TakeFailure("CREATE", path)) return *f;
    nlohmann::json obj = object;
    std::string name = obj["metadata"].value("name", "");
    if (name.empty()) name = obj["metadata"].value("generateName", "x-") + std::to_string(++names_);
    std::string full = path + "/" + name;
    if (objects_.count(full) > 0) {
      return informers::StatusFromHttp(409, R"({"reason":"AlreadyExists","message":"already exists"})");
    }
    obj["metadata"]["name"] = name;
    obj["metadata"]["uid"] = absl::StrCat("uid-", ++uids_);
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    obj["metadata"]["creationTimestamp"] = "2025-01-01T00:00:00Z";
    if (mutator_) mutator_(&obj);
    objects_[full] = obj;
    return obj;
  }

  absl::StatusOr<nlohmann::json> Update(const std::string& path, const nlohmann::json& object) override {
    absl::MutexLock lock(&mu_);
    Record("UPDATE", path, &object);
    if (auto f = TakeFailure("UPDATE", path)) return *f;
    auto it = objects_.find(path);
    if (it == objects_.end()) return informers::StatusFromHttp(404, R"({"reason":"NotFound","message":"not found"})");
    std::string sent_rv = object["metadata"].value("resourceVersion", "");
    if (sent_rv != it->second["metadata"].value("resourceVersion", "")) {
      return informers::StatusFromHttp(409, R"({"reason":"Conflict","message":"the object has been modified"})");
    }
    nlohmann::json obj = object;
    obj["metadata"]["uid"] = it->second["metadata"]["uid"];
    obj["metadata"]["creationTimestamp"] = it->second["metadata"]["creationTimestamp"];
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    if (mutator_) mutator_(&obj);
    it->second = obj;
    return obj;
  }

  absl::Status Delete(const std::string& path, const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    Record("DELETE", path, nullptr);
    if (auto f = TakeFailure("DELETE", path)) return *f;
    auto it = objects_.find(path);
    if (it == objects_.end()) return informers::StatusFromHttp(404, R"({"reason":"NotFound","message":"not found"})");
    if (!uid.empty() && it->second["metadata"].value("uid", "") != uid) {
      return informers::StatusFromHttp(409, R"({"reason":"Conflict","message":"uid precondition failed"})");
    }
    objects_.erase(it);
    ++rv_;
    return absl::OkStatus();
  }

  absl::Status Watch(const std::string& path, const informers::RequestOptions&, const informers::WatchHandler&,
                     std::stop_token) override {
    absl::MutexLock lock(&mu_);
    Record("WATCH", path, nullptr);
    return absl::UnimplementedError("the fake does not stream watches");
  }

  // Makes the next request with `verb` whose path starts with `path_prefix` fail with `status`
  // (failures queue in the order they are added). Thread-safe.
  void PrependFailure(const std::string& verb, const std::string& path_prefix, absl::Status status) {
    absl::MutexLock lock(&mu_);
    failures_.push_back({verb, path_prefix, std::move(status)});
  }

  // Stores `object` at `path` directly (someone else's write); assigns uid/resourceVersion when absent.
  void Put(const std::string& path, nlohmann::json object) {
    absl::MutexLock lock(&mu_);
    // Malformed objects (not an object, metadata not an object) are stored as given.
    if (object.is_object() && (!object.contains("metadata") || object["metadata"].is_object())) {
      if (!object["metadata"].contains("uid")) object["metadata"]["uid"] = absl::StrCat("uid-", ++uids_);
      object["metadata"]["resourceVersion"] = std::to_string(++rv_);
    } else {
      ++rv_;
    }
    objects_[path] = std::move(object);
  }

  // Removes the object at `path` directly (someone else's delete). Returns whether it existed.
  bool Remove(const std::string& path) {
    absl::MutexLock lock(&mu_);
    ++rv_;
    return objects_.erase(path) > 0;
  }

  // The stored object at `path`, or null.
  nlohmann::json Object(const std::string& path) const {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(path);
    return it == objects_.end() ? nlohmann::json() : it->second;
  }

  // Objects stored directly under the collection `path`.
  std::vector<nlohmann::json> Objects(const std::string& path) const {
    absl::MutexLock lock(&mu_);
    std::vector<nlohmann::json> out;
    for (const auto& [p, obj] : objects_) {
      if (p.rfind(path + "/", 0) == 0 && p.find('/', path.size() + 1) == std::string::npos) out.push_back(obj);
    }
    return out;
  }

  // The server's current resourceVersion (what a list would return).
  std::string CurrentResourceVersion() const {
    absl::MutexLock lock(&mu_);
    return std::to_string(rv_);
  }

  void SetMutator(Mutator m) {
    absl::MutexLock lock(&mu_);
    mutator_ = std::move(m);
  }

  std::vector<RecordedRequest> Requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

  // Requests whose verb is one of CREATE, UPDATE, DELETE.
  std::vector<RecordedRequest> Writes() const {
    absl::MutexLock lock(&mu_);
    std::vector<RecordedRequest> out;
    for (const auto& r : requests_) {
      if (r.verb == "CREATE" || r.verb == "UPDATE" || r.verb == "DELETE") out.push_back(r);
    }
    return out;
  }

  void ClearRequests() {
    absl::MutexLock lock(&mu_);
    requests_.clear();
  }

 private:
  struct Failure {
    std::string verb;
    std::string path_prefix;
    absl::Status status;
  };

  void Record(const char* verb, const std::string& path, const nlohmann::json* body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    requests_.push_back({verb, path, body == nullptr ? nlohmann::json() : *body});
  }

  std::optional<absl::Status> TakeFailure(const std::string& verb, const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
      if (it->verb == verb && path.rfind(it->path_prefix, 0) == 0) {
        absl::Status s = it->status;
        failures_.erase(it);
        return s;
      }
    }
    return std::nullopt;
  }

  static bool MatchesFieldSelector(const nlohmann::json& obj, const std::string& selector) {
    if (selector.empty()) return true;
    for (absl::string_view term : absl::StrSplit(selector, ',')) {
      std::vector<std::string> kv = absl::StrSplit(term, '=');
      if (kv.size() != 2) return false;
      const nlohmann::json* cur = &obj;
      for (absl::string_view part : absl::StrSplit(kv[0], '.')) {
        std::string key(part);
        if (!cur->is_object() || !cur->contains(key)) return false;
        cur = &(*cur)[key];
      }
      if (!cur->is_string() || cur->get<std::string>() != kv[1]) return false;
    }
    return true;
  }

  mutable absl::Mutex mu_;
  std::map<std::string, nlohmann::json> objects_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::deque<Failure> failures_ ABSL_GUARDED_BY(mu_);
  Mutator mutator_ ABSL_GUARDED_BY(mu_);
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 100;
  int64_t uids_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t names_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace liken::testing
