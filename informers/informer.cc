#include "informers/informer.h"

#include <algorithm>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::informers {
namespace {

std::string ResourceVersionOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

}  // namespace

Informer::Informer(KubeClient* client, Clock* clock, InformerOptions options, EventHandler* handler,
                   InformerObserver* observer)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      handler_(handler),
      observer_(observer),
      store_(options_.store_encoding),
      backoff_(options_.backoff_initial),
      waker_(std::make_unique<ScopedClockWaker>(clock, &mu_)) {}

Informer::~Informer() {
  Stop();
  waker_.reset();
}

void Informer::Start() {
  absl::MutexLock lock(&mu_);
  if (stopped_ || thread_.joinable()) return;  // a Stop that came first wins
  thread_ = std::jthread([this](std::stop_token stop) { Run(std::move(stop)); });
}

void Informer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;  // from here on Start creates no thread, so thread_ no longer changes
  }
  absl::MutexLock lock(&join_mu_);
  thread_.request_stop();  // ends the list or watch in flight; stopped_ ends a backoff
  if (thread_.joinable()) thread_.join();
}

bool Informer::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

bool Informer::WaitForSync() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](Informer* self) ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->synced_ || self->stopped_; }, this));
  return synced_;
}

bool Informer::Backoff() {
  absl::Duration wait = backoff_ * absl::Uniform(rng_, 1.0, 1.5);  // jitter
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  absl::MutexLock lock(&mu_);
  absl::Time deadline = clock_->Now() + wait;
  while (!stopped_ && clock_->Now() < deadline) {
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopped_), deadline);
  }
  return !stopped_;
}

absl::Status Informer::ListOnce(std::stop_token stop) {
  RequestOptions opts;
  opts.field_selector = options_.field_selector;
  opts.label_selector = options_.label_selector;
  opts.limit = options_.list_page_size;
  std::vector<ObjectPtr> objects;
  std::string list_version;
  int pages = 0;
  // Page after page: every page is one consistent snapshot, at the first page's resourceVersion. A continue
  // token that expired meanwhile (410 Gone) fails the whole list: the caller lists again from the start.
  do {
    auto list = client_->List(options_.path, opts, stop);
    if (!list.ok()) {
      if (pages > 0 && IsGone(list.status())) {
        return absl::Status(list.status().code(),
                            absl::StrCat("the list's continue token expired after ", pages, " pages: ",
                                         list.status().message()));
      }
      return list.status();
    }
    if (!list->is_object() || !list->contains("items") ||
        !((*list)["items"].is_array() || (*list)["items"].is_null())) {
      return absl::InternalError("list of " + options_.resource + " has no items");
    }
    ++pages;
    if ((*list)["items"].is_array()) {
      for (auto& item : (*list)["items"]) {
        if (ObjectKey(item).empty()) {
          LogWarning("informer: skipping a listed object without a name", {{"resource", options_.resource}});
          continue;
        }
        if (options_.transform) options_.transform(&item);
        objects.push_back(std::make_shared<const nlohmann::json>(std::move(item)));
      }
    }
    if (pages == 1) list_version = ResourceVersionOf(*list);
    opts.continue_token.clear();
    if (const auto meta = list->find("metadata"); meta != list->end() && meta->is_object()) {
      opts.continue_token = meta->value("continue", "");
    }
  } while (!opts.continue_token.empty());
  if (pages > 1) {
    LogDebug("informer: listed in pages",
             {{"resource", options_.resource}, {"pages", absl::StrCat(pages)}, {"objects", absl::StrCat(objects.size())}});
  }
  std::vector<std::pair<ObjectPtr, ObjectPtr>> changes;  // (old, new)
  for (const auto& o : objects) changes.emplace_back(store_.Get(ObjectKey(*o)), o);
  std::vector<ObjectPtr> dropped = store_.Replace(objects);
  resource_version_ = list_version;
  store_.SetResourceVersion(resource_version_);
  lists_.fetch_add(1);
  {
    absl::MutexLock lock(&mu_);
    synced_ = true;
  }
  if (handler_ != nullptr) {
    for (const auto& [old_obj, new_obj] : changes) {
      if (old_obj == nullptr) {
        handler_->OnAdd(new_obj);
      } else if (ResourceVersionOf(*old_obj) != ResourceVersionOf(*new_obj)) {
        handler_->OnUpdate(old_obj, new_obj);
      }
    }
    for (const auto& o : dropped) handler_->OnDelete(o);
  }
  return absl::OkStatus();
}

void Informer::Apply(const WatchEvent& event) {
  if (event.type == "BOOKMARK") {
    std::string rv = ResourceVersionOf(event.object);
    if (!rv.empty()) {
      resource_version_ = rv;
      store_.SetResourceVersion(rv);
    }
    return;
  }
  std::string key = ObjectKey(event.object);
  if (key.empty()) {
    LogWarning("informer: ignoring a watch event without a name", {{"resource", options_.resource}});
    return;
  }
  std::string rv = ResourceVersionOf(event.object);
  nlohmann::json copy = event.object;
  if (options_.transform) options_.transform(&copy);
  auto object = std::make_shared<const nlohmann::json>(std::move(copy));
  if (event.type == "ADDED" || event.type == "MODIFIED") {
    ObjectPtr old = store_.Upsert(object);
    if (!rv.empty()) {
      resource_version_ = rv;
      store_.SetResourceVersion(rv);
    }
    if (handler_ != nullptr) {
      if (old == nullptr) {
        handler_->OnAdd(object);
      } else {
        handler_->OnUpdate(old, object);
      }
    }
  } else if (event.type == "DELETED") {
    ObjectPtr old = store_.Remove(key);
    if (!rv.empty()) {
      resource_version_ = rv;
      store_.SetResourceVersion(rv);
    }
    if (handler_ != nullptr) handler_->OnDelete(old != nullptr ? old : object);
  } else {
    LogWarning("informer: unknown watch event type", {{"resource", options_.resource}, {"type", event.type}});
  }
}

absl::Status Informer::WatchOnce(std::stop_token stop, bool* got_event_out) {
  RequestOptions opts;
  opts.field_selector = options_.field_selector;
  opts.label_selector = options_.label_selector;
  opts.resource_version = resource_version_;
  opts.allow_watch_bookmarks = true;
  // Spread reconnects over time like client-go: timeout in [t, 2t).
  opts.timeout_seconds = options_.watch_timeout_seconds +
                         absl::Uniform(rng_, 0, std::max(1, options_.watch_timeout_seconds));
  bool got_event = false;
  absl::Status s = client_->Watch(
      options_.path, opts,
      [&](const WatchEvent& event) {
        if (observer_ != nullptr) observer_->OnWatchEvent(options_.resource, event.type);
        Apply(event);
        got_event = true;
        return true;
      },
      std::move(stop));
  // Only a watch that delivered something shows the server is healthy: a successful list does not (a
  // server answering every watch with 410 would otherwise make LIST+WATCH spin).
  if (got_event) backoff_ = options_.backoff_initial;
  *got_event_out = got_event;
  return s;
}

void Informer::Run(std::stop_token stop) {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return;
    }
    if (resource_version_.empty()) {
      absl::Status s = ListOnce(stop);
      if (s.code() == absl::StatusCode::kCancelled) return;
      if (!s.ok()) {
        if (IsLimitExceeded(s)) {
          LogError("informer: list response over the size limit",
                   {{"resource", options_.resource}, {"error", s.ToString()}});
        } else {
          LogWarning("informer: list failed", {{"resource", options_.resource}, {"error", s.ToString()}});
        }
        if (observer_ != nullptr) observer_->OnWatchRestart(options_.resource, "error");
        if (!Backoff()) return;
        continue;
      }
    }
    const absl::Time watch_start = clock_->Now();
    bool got_event = false;
    absl::Status s = WatchOnce(stop, &got_event);
    if (s.ok()) {
      // The server ended the stream (its timeout): resume from where we are. A server that ends every
      // stream at once would make this spin, so a stream shorter than a second waits out a backoff.
      if (clock_->Now() - watch_start < absl::Seconds(1) && !Backoff()) return;
      continue;
    }
    if (s.code() == absl::StatusCode::kCancelled) return;
    if (IsGone(s)) {
      LogInfo("informer: resource version too old, relisting", {{"resource", options_.resource}});
      if (observer_ != nullptr) observer_->OnWatchRestart(options_.resource, "gone");
      resource_version_.clear();
      // Gone right away (no event since the list) means relisting does not help yet: wait before it.
      if (!got_event && !Backoff()) return;
      continue;
    }
    if (IsLimitExceeded(s)) {
      // An event too large to hold: the stream cannot be resumed past it, so relist (after a backoff).
      LogError("informer: watch event over the size limit, relisting",
               {{"resource", options_.resource}, {"error", s.ToString()}});
      if (observer_ != nullptr) observer_->OnWatchRestart(options_.resource, "error");
      resource_version_.clear();
      if (!Backoff()) return;
      continue;
    }
    const char* reason = s.code() == absl::StatusCode::kDeadlineExceeded ? "timeout" : "error";
    LogWarning("informer: watch failed, reconnecting", {{"resource", options_.resource}, {"error", s.ToString()}});
    if (observer_ != nullptr) observer_->OnWatchRestart(options_.resource, reason);
    if (!Backoff()) return;
  }
}

}  // namespace liken::informers
