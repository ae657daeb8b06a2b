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

void Store::IndexLocked(const std::string& key, const nlohmann::json* object, bool add) {
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

Store::Entry Store::Encode(ObjectPtr object) const {
  if (encoding_ == StoreEncoding::kTree || object == nullptr) return Entry{std::move(object), nullptr};
  return Entry{nullptr, std::make_shared<const std::vector<std::uint8_t>>(nlohmann::json::to_cbor(*object))};
}

ObjectPtr Store::Decode(const Entry& entry) {
  if (entry.cbor == nullptr) return entry.tree;
  // Bytes this store wrote with to_cbor: they always parse.
  nlohmann::json object = nlohmann::json::from_cbor(*entry.cbor, /*strict=*/true, /*allow_exceptions=*/false);
  if (object.is_discarded()) return nullptr;
  return std::make_shared<const nlohmann::json>(std::move(object));
}

ObjectPtr Store::Upsert(ObjectPtr object) {
  std::string key = ObjectKey(*object);
  Entry fresh = Encode(object);
  Entry old;
  {
    absl::MutexLock lock(&mu_);
    Entry& slot = objects_[key];
    old = std::move(slot);
    if (!index_funcs_.empty()) IndexLocked(key, Decode(old).get(), false);
    slot = std::move(fresh);
    IndexLocked(key, object.get(), true);
  }
  return Decode(old);
}

ObjectPtr Store::Remove(const std::string& key) {
  Entry old;
  {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return nullptr;
    old = std::move(it->second);
    objects_.erase(it);
    if (!index_funcs_.empty()) IndexLocked(key, Decode(old).get(), false);
  }
  return Decode(old);
}

std::vector<ObjectPtr> Store::Replace(std::vector<ObjectPtr> objects) {
  std::map<std::string, ObjectPtr> by_key;
  for (auto& o : objects) by_key[ObjectKey(*o)] = std::move(o);
  std::map<std::string, Entry> fresh;
  for (const auto& [key, o] : by_key) fresh[key] = Encode(o);
  std::vector<Entry> dropped;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, entry] : objects_) {
      if (fresh.count(key) == 0) dropped.push_back(std::move(entry));
    }
    objects_ = std::move(fresh);
    indexes_.clear();
    for (const auto& [key, o] : by_key) IndexLocked(key, o.get(), true);
  }
  std::vector<ObjectPtr> out;
  out.reserve(dropped.size());
  for (const auto& entry : dropped) out.push_back(Decode(entry));
  return out;
}

ObjectPtr Store::Get(const std::string& key) const {
  Entry entry;
  {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return nullptr;
    entry = it->second;
  }
  return Decode(entry);
}

std::vector<ObjectPtr> Store::List() const {
  std::vector<Entry> entries;
  {
    absl::MutexLock lock(&mu_);
    entries.reserve(objects_.size());
    for (const auto& [key, entry] : objects_) entries.push_back(entry);
  }
  std::vector<ObjectPtr> out;
  out.reserve(entries.size());
  for (const auto& entry : entries) out.push_back(Decode(entry));
  return out;
}

std::vector<ObjectPtr> Store::ByIndex(const std::string& index, const std::string& value) const {
  std::vector<Entry> entries;
  {
    absl::MutexLock lock(&mu_);
    auto i = indexes_.find(index);
    if (i == indexes_.end()) return {};
    auto v = i->second.find(value);
    if (v == i->second.end()) return {};
    for (const auto& key : v->second) {
      if (auto it = objects_.find(key); it != objects_.end()) entries.push_back(it->second);
    }
  }
  std::vector<ObjectPtr> out;
  out.reserve(entries.size());
  for (const auto& entry : entries) out.push_back(Decode(entry));
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
