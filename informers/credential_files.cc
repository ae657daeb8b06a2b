#include "informers/credential_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "common/log.h"

namespace liken::informers {
namespace {

std::string Describe(const FileIdentity& id) { return id.error == ENOENT ? "missing" : std::strerror(id.error); }

}  // namespace

FileIdentity FileIdentity::Of(const std::string& path) {
  FileIdentity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    id.error = errno != 0 ? errno : EIO;
    return id;
  }
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = st.st_size;
  id.mtime = st.st_mtim;
  return id;
}

bool FileIdentity::operator==(const FileIdentity& other) const {
  return error == other.error && dev == other.dev && ino == other.ino && size == other.size &&
         mtime.tv_sec == other.mtime.tv_sec && mtime.tv_nsec == other.mtime.tv_nsec;
}

absl::StatusOr<std::unique_ptr<CredentialFiles>> CredentialFiles::Create(const KubeConfig& config, FileReader read) {
  if (!read) read = [](const std::string& path) { return ReadFileToString(path); };
  auto source = [&](const char* what, const std::string& pem, const std::string& path) {
    Source s{what, path, pem, {}};
    if (path.empty()) return s;
    s.seen = FileIdentity::Of(path);
    if (s.seen.error != 0) {
      LogWarning("kube client: credential file missing, using what was loaded",
                 {{"file", path}, {"error", Describe(s.seen)}});
      return s;
    }
    auto text = read(path);
    if (text.ok()) {
      s.text = *std::move(text);
    } else {
      LogWarning("kube client: cannot read credential file, using what was loaded",
                 {{"file", path}, {"error", text.status().ToString()}});
    }
    return s;
  };
  Source ca = source("CA file", config.ca_pem, config.ca_file);
  Source cert = source("client certificate file", config.client_cert_pem, config.client_cert_file);
  Source key = source("client key file", config.client_key_pem, config.client_key_file);
  auto material = std::make_shared<TlsMaterial>();
  material->generation = 1;
  if (!ca.text.empty()) {
    auto trust = TrustStore::FromPem(ca.text);
    if (!trust.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ca.path.empty() ? "CA data" : ca.path, ": ", trust.status().message()));
    }
    material->trust = *std::move(trust);
  }
  if (!cert.text.empty() || !key.text.empty()) {
    auto identity = ClientIdentity::FromPem(cert.text, key.text);
    if (!identity.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(cert.path.empty() ? "client certificate data" : cert.path, ", ",
                                                     key.path.empty() ? "client key data" : key.path, ": ",
                                                     identity.status().message()));
    }
    material->identity = *std::move(identity);
  }
  std::unique_ptr<CredentialFiles> files(
      new CredentialFiles(std::move(read), std::move(ca), std::move(cert), std::move(key)));
  {
    absl::MutexLock lock(&files->material_mu_);  // not shared yet; the lock satisfies the annotations
    files->material_ = std::move(material);
  }
  return files;
}

bool CredentialFiles::Check(Source& source) {
  if (source.path.empty()) return false;
  FileIdentity now = FileIdentity::Of(source.path);
  if (now == source.seen) return false;
  source.seen = now;
  if (now.error != 0) {
    LogWarning(absl::StrCat("kube client: ", source.what, " is gone, keeping the last good one"),
               {{"file", source.path}, {"error", Describe(now)}});
    return false;
  }
  ++reads_;
  auto text = read_(source.path);
  if (!text.ok()) {
    LogError(absl::StrCat("kube client: cannot read the changed ", source.what, ", keeping the last good one"),
             {{"file", source.path}, {"error", text.status().ToString()}});
    return false;
  }
  // A projected volume swaps every file when one of them (the token) changes: same bytes, nothing to parse.
  if (*text == source.text) return false;
  source.text = *std::move(text);
  return true;
}

std::shared_ptr<const TlsMaterial> CredentialFiles::Refresh() {
  absl::MutexLock lock(&refresh_mu_);
  const bool ca_changed = Check(ca_);
  const bool cert_changed = Check(cert_);
  const bool key_changed = Check(key_);
  std::shared_ptr<const TlsMaterial> current = Current();
  if (!ca_changed && !cert_changed && !key_changed) return current;
  auto next = std::make_shared<TlsMaterial>(*current);
  bool replaced = false;
  if (ca_changed) {
    auto trust = TrustStore::FromPem(ca_.text);
    if (trust.ok()) {
      next->trust = *std::move(trust);
      replaced = true;
      LogInfo("kube client: CA bundle reloaded",
              {{"file", ca_.path}, {"certificates", absl::StrCat(next->trust->size())}});
    } else {
      LogError("kube client: the changed CA file is rejected, keeping the last good CA bundle",
               {{"file", ca_.path}, {"error", trust.status().ToString()}});
    }
  }
  if (cert_changed || key_changed) {
    auto identity = ClientIdentity::FromPem(cert_.text, key_.text);
    if (identity.ok()) {
      next->identity = *std::move(identity);
      replaced = true;
      LogInfo("kube client: client certificate reloaded",
              {{"certificate", cert_.path}, {"key", key_.path}, {"subject", next->identity->Subject()}});
    } else {
      LogError("kube client: the changed client certificate or key is rejected, keeping the last good pair",
               {{"certificate", cert_.path}, {"key", key_.path}, {"error", identity.status().ToString()}});
    }
  }
  if (!replaced) return current;
  next->generation = current->generation + 1;
  absl::MutexLock material_lock(&material_mu_);
  material_ = next;
  return next;
}

std::shared_ptr<const TlsMaterial> CredentialFiles::Current() const {
  absl::MutexLock lock(&material_mu_);
  return material_;
}

int64_t CredentialFiles::reads() const {
  absl::MutexLock lock(&refresh_mu_);
  return reads_;
}

}  // namespace liken::informers
