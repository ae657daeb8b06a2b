// The TLS material for the API server (CA bundle, client certificate and key) kept current with the files
// it came from: each file is checked with one stat() per request and read again only when it changed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "informers/client_identity.h"
#include "informers/kube_config.h"
#include "informers/trust_store.h"

namespace liken::informers {

// What stat() (through symlinks) says about a file. Kubelet's projected and Secret volumes rotate a file by
// swapping a `..data` symlink to a new directory, which changes the inode; an edit in place changes the size or
// the modification time. Two observations are equal when nothing a rotation changes differs. A value type.
struct FileIdentity {
  int error = 0;  // errno of a failed stat (ENOENT: missing), 0 when the file exists
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};

  // Observes `path` now. Thread-safe.
  static FileIdentity Of(const std::string& path);
  // True for the same observation (two failures are equal when their errno is). Thread-safe.
  bool operator==(const FileIdentity& other) const;
};

// The material in force at one moment. Immutable; thread-safe.
struct TlsMaterial {
  std::shared_ptr<const TrustStore> trust;        // null: no CA given (the system's trust store)
  std::shared_ptr<const ClientIdentity> identity;  // null: no client certificate
  uint64_t generation = 0;                         // 1 at start, +1 whenever trust or identity is replaced
};

// Holds the current TlsMaterial of a KubeConfig and replaces it when a file it came from (ca_file,
// client_cert_file, client_key_file) changes. Inline data never changes. A changed file that cannot be read
// or parsed, or that went missing, keeps the last good material (never the system bundle) and is logged once
// per change. Thread-safe.
class CredentialFiles {
 public:
  // Reads one file (ReadFileToString in production; tests count calls). Must be thread-safe.
  using FileReader = std::function<absl::StatusOr<std::string>(const std::string& path)>;

  // Builds the material of `config` (its CA, client certificate and key), reading the files it names once
  // more with `read` (default: ReadFileToString), so that a rotation since the config was loaded is not
  // missed; a file that cannot be read now keeps the PEM already in `config`. InvalidArgument naming the
  // file when the material does not parse. Thread-safe.
  static absl::StatusOr<std::unique_ptr<CredentialFiles>> Create(const KubeConfig& config, FileReader read = {});

  // Stats each file; reads and parses again only the files whose identity changed, and returns the material
  // in force afterwards. With no change it costs one stat() per file and reads nothing. Thread-safe.
  std::shared_ptr<const TlsMaterial> Refresh() ABSL_LOCKS_EXCLUDED(refresh_mu_, material_mu_);

  // The material in force, without looking at the files. Thread-safe.
  std::shared_ptr<const TlsMaterial> Current() const ABSL_LOCKS_EXCLUDED(material_mu_);

  // How many times a file was read after Create. Thread-safe.
  int64_t reads() const ABSL_LOCKS_EXCLUDED(refresh_mu_);

 private:
  // One PEM input: inline data (no path) or the last text read from a file.
  struct Source {
    std::string what;        // "CA file", "client certificate file", "client key file" (for logs)
    std::string path;        // empty for inline data
    std::string text;        // the last text read (or the inline data)
    FileIdentity seen;       // the last identity observed
  };

  CredentialFiles(FileReader read, Source ca, Source cert, Source key)
      : read_(std::move(read)), ca_(std::move(ca)), cert_(std::move(cert)), key_(std::move(key)) {}

  // Observes `source`'s file; on a change reads it again. True when its text was replaced.
  bool Check(Source& source) ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);

  const FileReader read_;
  mutable absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(material_mu_);  // serializes Refresh
  Source ca_ ABSL_GUARDED_BY(refresh_mu_);
  Source cert_ ABSL_GUARDED_BY(refresh_mu_);
  Source key_ ABSL_GUARDED_BY(refresh_mu_);
  int64_t reads_ ABSL_GUARDED_BY(refresh_mu_) = 0;
  mutable absl::Mutex material_mu_;
  std::shared_ptr<const TlsMaterial> material_ ABSL_GUARDED_BY(material_mu_);
};

}  // namespace liken::informers
