#include "kubelet/claim_checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "apis/resource_slice.h"
#include "common/atomic_file.h"
#include "common/files.h"

namespace liken::kubelet {
namespace {

constexpr int kRecordVersion = 1;
constexpr char kSuffix[] = ".json";

nlohmann::json StringList(const std::vector<std::string>& v) { return nlohmann::json(v); }

std::vector<std::string> ReadStringList(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  for (const auto& s : j.at(key)) out.push_back(s.get<std::string>());
  return out;
}

// A published attribute as the API's one-of object; nullopt for anything else (left out of the record).
std::optional<discovery::AttributeValue> ReadAttributeValue(const nlohmann::json& j) {
  if (!j.is_object() || j.size() != 1) return std::nullopt;
  auto it = j.begin();
  if (it.key() == "string" && it->is_string()) return it->get<std::string>();
  if (it.key() == "bool" && it->is_boolean()) return it->get<bool>();
  if (it.key() == "int" && it->is_number_integer()) return it->get<int64_t>();
  if (it.key() == "version" && it->is_string()) return apis::VersionValue{it->get<std::string>()};
  return std::nullopt;
}

}  // namespace

std::string PreparedClaimToJson(const PreparedClaim& claim, absl::string_view boot_id) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : claim.results) {
    nlohmann::json jr = {{"requestNames", StringList(r.request_names)},
                         {"pool", r.pool},
                         {"device", r.device},
                         {"cdiDeviceIDs", StringList(r.cdi_device_ids)}};
    if (r.share_id) jr["shareID"] = *r.share_id;
    if (r.admin_access) jr["adminAccess"] = true;
    results.push_back(std::move(jr));
  }
  nlohmann::json delivered = nlohmann::json::array();
  for (const auto& d : claim.delivered) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : d.nodes) {
      nodes.push_back({{"path", n.path},
                       {"type", std::string(1, n.type)},
                       {"major", n.major},
                       {"minor", n.minor},
                       {"subsystem", n.subsystem}});
    }
    nlohmann::json attributes = nlohmann::json::object();
    for (const auto& [key, value] : d.attributes) attributes[key] = apis::AttributeValueToJson(value);
    nlohmann::json jd = {{"name", d.name},
                         {"nodes", std::move(nodes)},
                         {"usbInterfaces", StringList(d.usb_interfaces)},
                         {"sysfsPath", d.sysfs_path},
                         {"attributes", std::move(attributes)}};
    if (d.admin_access) jd["adminAccess"] = true;
    delivered.push_back(std::move(jd));
  }
  nlohmann::json j = {
      {"version", kRecordVersion},
      {"bootID", std::string(boot_id)},
      {"claim", {{"namespace", claim.ref.namespace_name}, {"name", claim.ref.name}, {"uid", claim.ref.uid}}},
      {"results", std::move(results)},
      {"delivered", std::move(delivered)},
      {"metadataGeneration", claim.metadata_generation},
  };
  if (claim.pod_claim_name) j["podClaimName"] = *claim.pod_claim_name;
  return j.dump() + "\n";
}

absl::StatusOr<CheckpointRecord> ParsePreparedClaim(absl::string_view json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("record is not a JSON object");
  CheckpointRecord rec;
  try {
    if (j.at("version").get<int>() != kRecordVersion) {
      return absl::InvalidArgumentError(absl::StrCat("record version ", j.at("version").dump(), " is not supported"));
    }
    rec.boot_id = j.at("bootID").get<std::string>();
    const auto& c = j.at("claim");
    rec.claim.ref = {c.at("namespace").get<std::string>(), c.at("uid").get<std::string>(),
                     c.at("name").get<std::string>()};
    for (const auto& r : j.at("results")) {
      PreparedResult pr;
      pr.request_names = ReadStringList(r, "requestNames");
      pr.pool = r.at("pool").get<std::string>();
      pr.device = r.at("device").get<std::string>();
      pr.cdi_device_ids = ReadStringList(r, "cdiDeviceIDs");
      if (r.contains("shareID")) pr.share_id = r.at("shareID").get<std::string>();
      pr.admin_access = r.value("adminAccess", false);
      rec.claim.results.push_back(std::move(pr));
    }
    for (const auto& d : j.at("delivered")) {
      DeliveredDevice dd;
      dd.name = d.at("name").get<std::string>();
      for (const auto& n : d.at("nodes")) {
        discovery::DeviceNode node;
        node.path = n.at("path").get<std::string>();
        std::string type = n.at("type").get<std::string>();
        if (type != "c" && type != "b") return absl::InvalidArgumentError("node type is not c or b");
        node.type = type[0];
        node.major = n.at("major").get<uint32_t>();
        node.minor = n.at("minor").get<uint32_t>();
        node.subsystem = n.value("subsystem", "");
        dd.nodes.push_back(std::move(node));
      }
      dd.usb_interfaces = ReadStringList(d, "usbInterfaces");
      dd.sysfs_path = d.value("sysfsPath", "");
      dd.admin_access = d.value("adminAccess", false);
      if (auto a = d.find("attributes"); a != d.end() && a->is_object()) {
        for (const auto& [key, value] : a->items()) {
          if (auto v = ReadAttributeValue(value)) dd.attributes[key] = *v;
        }
      }
      rec.claim.delivered.push_back(std::move(dd));
    }
    if (j.contains("podClaimName")) rec.claim.pod_claim_name = j.at("podClaimName").get<std::string>();
    rec.claim.metadata_generation = j.value("metadataGeneration", int64_t{1});
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("record has a missing or mistyped field: ", e.what()));
  }
  if (rec.claim.ref.uid.empty()) return absl::InvalidArgumentError("record has an empty claim UID");
  return rec;
}

ClaimCheckpoint::ClaimCheckpoint(std::string dir, std::string boot_id)
    : dir_(std::move(dir)), boot_id_(std::move(boot_id)) {}

absl::Status ClaimCheckpoint::EnsureDirectory() const { return MakeDirectories(dir_); }

bool ClaimCheckpoint::DirectoryExists() const {
  struct stat st;
  return ::stat(dir_.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<DirectoryLock> ClaimCheckpoint::LockDirectory() const {
  ScopedFd fd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0 && errno == ENOENT) {
    if (auto s = EnsureDirectory(); !s.ok()) return s;
    fd = ScopedFd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (fd.get() < 0) return absl::InternalError(absl::StrCat("open directory ", dir_, ": ", std::strerror(errno)));
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("lock directory ", dir_, ": ", std::strerror(errno)));
  }
  return DirectoryLock(std::move(fd));
}

absl::Status ClaimCheckpoint::Save(const PreparedClaim& claim) const {
  const std::string name = absl::StrCat(claim.ref.uid, kSuffix);
  const std::string json = PreparedClaimToJson(claim, boot_id_);
  absl::Status s = WriteFileAtomically(dir_, name, json, Durability::kUnsynced);
  if (absl::IsNotFound(s) && !DirectoryExists()) {  // deleted under the running daemon: recreate it
    if (auto made = EnsureDirectory(); !made.ok()) return made;
    s = WriteFileAtomically(dir_, name, json, Durability::kUnsynced);
  }
  return s;
}

std::vector<absl::Status> ClaimCheckpoint::SaveBatch(const std::vector<const PreparedClaim*>& claims) const {
  std::vector<absl::Status> out;
  out.reserve(claims.size());
  for (const PreparedClaim* claim : claims) out.push_back(Save(*claim));
  return out;
}

absl::StatusOr<int> ClaimCheckpoint::RemoveTempFiles(std::optional<absl::string_view> claim_uid) const {
  const std::string one = claim_uid ? absl::StrCat(*claim_uid, kSuffix) : std::string();
  return RemoveLeftoverTempFiles(dir_, [&](absl::string_view target) {
    return claim_uid ? target == one : absl::EndsWith(target, kSuffix);
  });
}

absl::Status ClaimCheckpoint::Remove(absl::string_view claim_uid) const {
  return RemoveFileIfPresent(dir_, absl::StrCat(claim_uid, kSuffix), Durability::kUnsynced);
}

bool ClaimCheckpoint::Exists(absl::string_view claim_uid) const {
  auto dir = OpenDirectoryNoFollow(dir_);  // a record behind a symlinked directory is none of ours
  if (!dir.ok()) return false;
  struct stat st;
  return ::fstatat(dir->get(), absl::StrCat(claim_uid, kSuffix).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

absl::StatusOr<ClaimCheckpoint::Contents> ClaimCheckpoint::Load(std::stop_token stop) const {
  auto names = ListDirectory(dir_);
  if (!names.ok()) {
    if (absl::IsNotFound(names.status())) return Contents{};
    return names.status();
  }
  Contents out;
  for (const auto& name : *names) {
    if (stop.stop_requested()) return absl::CancelledError("reading the claim records was cancelled");
    if (name.empty() || name[0] == '.' || !absl::EndsWith(name, kSuffix)) continue;  // temp files
    std::string uid = name.substr(0, name.size() - (sizeof(kSuffix) - 1));
    auto text = ReadRegularFile(absl::StrCat(dir_, "/", name), 4 << 20, FinalSymlink::kRefuse);
    if (!text.ok()) {  // a FIFO, device or socket is refused at once, never waited on
      out.unreadable_uids.push_back(uid);
      out.unreadable_errors.push_back(text.status());
      continue;
    }
    if (std::all_of(text->begin(), text->end(), [](char c) { return c == '\0'; })) {
      // Empty or zeros: a record renamed in place whose data never reached the disk before a power loss.
      out.previous_boot_uids.push_back(uid);
      continue;
    }
    auto rec = ParsePreparedClaim(*text);
    if (!rec.ok() || rec->claim.ref.uid != uid) {
      out.unreadable_uids.push_back(uid);
      out.unreadable_errors.push_back(rec.ok() ? absl::InvalidArgumentError(absl::StrCat(
                                                     "record names claim UID ", rec->claim.ref.uid))
                                               : rec.status());
      continue;
    }
    if (rec->boot_id != boot_id_) {
      out.previous_boot_uids.push_back(uid);
    } else {
      out.current_boot.push_back(std::move(rec->claim));
    }
  }
  return out;
}

}  // namespace liken::kubelet
