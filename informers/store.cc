#include "informers/store.h"

namespace liken::informers {

void StripManagedFields(nlohmann::json* object) {
  if (object == nullptr || !object->is_object()) return;
  auto meta = object->find("metadata");
  if (meta != object->end() && meta->is_object()) meta->erase("managedFields");
}

std::string ObjectKey(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  std::string name = meta->contains("name") && (*meta)["name"].is_string() ? (*meta)["name"].get<std::string>() : "";
  std::string ns = meta->contains("namespace") && (*meta)["namespace"].is_string()
                       ? (*meta)["namespace"].get<std::string>()
                       : "";
  return ns.empty() ? name : ns + "/" + name;
}

void Store::AddIndex(const std::string& name, IndexFunc func) { index_funcs_[name] = std::move(func); }

void Store::IndexLocked(const std::string& key, const ObjectPtr& object, bool add) {
  if (object == nullptr) return;
  for (const auto& [name, func] : index_funcs_) {
    auto& index = indexes_[name];
    for (const auto& value : func(*object)) {
      if (add) {
        index[value].insert(key);
      } else if (auto it = index.find(value); it != index.end()) {
        it->second.erase(key);
        if (it->second.empty()) index.erase(it);
      }
    }
  }
}

ObjectPtr Store::Upsert(ObjectPtr object) {
  std::string key = ObjectKey(*object);
  absl::MutexLock lock(&mu_);
  ObjectPtr& slot = objects_[key];
  ObjectPtr old = slot;
  IndexLocked(key, old, false);
  slot = std::move(object);
  IndexLocked(key, slot, true);
  return old;
}

ObjectPtr Store::Remove(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  ObjectPtr old = it->second;
  IndexLocked(key, old, false);
  objects_.erase(it);
  return old;
}

std::vector<ObjectPtr> Store::Replace(std::vector<ObjectPtr> objects) {
  std::map<std::string, ObjectPtr> fresh;
  for (auto& o : objects) fresh[ObjectKey(*o)] = std::move(o);
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> dropped;
  for (auto& [key, obj] : objects_) {
    if (fresh.count(key) == 0) dropped.push_back(obj);
  }
  objects_ = std::move(fresh);
  indexes_.clear();
  for (const auto& [key, obj] : objects_) IndexLocked(key, obj, true);
  return dropped;
}

ObjectPtr Store::Get(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Store::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, obj] : objects_) out.push_back(obj);
  return out;
}

std::vector<ObjectPtr> Store::ByIndex(const std::string& index, const std::string& value) const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> out;
  auto i = indexes_.find(index);
  if (i == indexes_.end()) return out;
  auto v = i->second.find(value);
  if (v == i->second.end()) return out;
  for (const auto& key : v->second) {
    if (auto it = objects_.find(key); it != objects_.end()) out.push_back(it->second);
  }
  return out;
}

size_t Store::Size() const {
  absl::MutexLock lock(&mu_);
  return objects_.size();
}

void Store::SetResourceVersion(const std::string& rv) {
  absl::MutexLock lock(&mu_);
  resource_version_ = rv;
}

std::string Store::ResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

}  // namespace liken::informers
