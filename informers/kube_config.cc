#include "informers/kube_config.h"

#include <yaml-cpp/yaml.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"

#ifndef LIKEN_VERSION
#define LIKEN_VERSION "dev"
#endif

namespace liken::informers {
namespace {

// Finds the entry of a named list (clusters, users, contexts) and returns its `field` map.
absl::StatusOr<YAML::Node> FindNamed(const YAML::Node& root, const char* list, const std::string& name,
                                     const char* field) {
  YAML::Node items = root[list];
  if (!items || !items.IsSequence()) return absl::InvalidArgumentError(absl::StrCat("kubeconfig has no ", list));
  for (const auto& item : items) {
    if (!item.IsMap() || !item["name"] || item["name"].as<std::string>() != name) continue;
    YAML::Node value = item[field];
    if (!value || !value.IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", list, " entry '", name, "' has no ", field));
    }
    return value;
  }
  return absl::InvalidArgumentError(absl::StrCat("kubeconfig has no ", list, " entry named '", name, "'"));
}

std::string Str(const YAML::Node& map, const char* key) {
  YAML::Node v = map[key];
  if (!v || !v.IsScalar()) return "";
  return v.as<std::string>();
}

// Reads `<key>-data` (base64) or `<key>` (a file) from `map` into `out`; `file_out` gets the file's path
// (relative ones resolved against `base_dir`), or stays empty for inline data.
absl::Status DataOrFile(const YAML::Node& map, const std::string& key, const std::string& base_dir,
                        const KubeconfigFileReader& read_file, std::string* out, std::string* file_out) {
  std::string data = Str(map, (key + "-data").c_str());
  if (!data.empty()) {
    if (!absl::Base64Unescape(data, out)) return absl::InvalidArgumentError(key + "-data is not base64");
    return absl::OkStatus();
  }
  std::string file = Str(map, key.c_str());
  if (file.empty()) return absl::OkStatus();
  if (file[0] != '/') file = base_dir + "/" + file;
  auto text = read_file(file);
  if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat(key, " ", file, ": ", text.status().message()));
  *out = *std::move(text);
  *file_out = file;
  return absl::OkStatus();
}

}  // namespace

std::string DefaultUserAgent() { return absl::StrCat("liken-dra/", LIKEN_VERSION); }

absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context_name) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseKubeconfig(*text, path, context_name, [](const std::string& file) { return ReadFileToString(file); });
}

absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text, const std::string& path,
                                           const std::string& context_name, const KubeconfigFileReader& read_file) {
  KubeConfig config;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return absl::InvalidArgumentError(path + ": not a kubeconfig (not a YAML map)");
    std::string context = context_name.empty() ? Str(root, "current-context") : context_name;
    if (context.empty()) return absl::InvalidArgumentError(path + ": no context given and no current-context");
    auto ctx = FindNamed(root, "contexts", context, "context");
    if (!ctx.ok()) return ctx.status();
    auto cluster = FindNamed(root, "clusters", Str(*ctx, "cluster"), "cluster");
    if (!cluster.ok()) return cluster.status();
    std::string base_dir = DirName(path);
    config.context_namespace = Str(*ctx, "namespace");
    config.server = Str(*cluster, "server");
    if (config.server.empty()) return absl::InvalidArgumentError(path + ": cluster has no server");
    config.insecure_skip_tls_verify = Str(*cluster, "insecure-skip-tls-verify") == "true";
    if (auto s = DataOrFile(*cluster, "certificate-authority", base_dir, read_file, &config.ca_pem, &config.ca_file);
        !s.ok()) {
      return s;
    }
    std::string user_name = Str(*ctx, "user");
    if (!user_name.empty()) {
      auto user = FindNamed(root, "users", user_name, "user");
      if (!user.ok()) return user.status();
      config.token = Str(*user, "token");
      config.token_file = Str(*user, "tokenFile");
      if (!config.token_file.empty() && config.token_file[0] != '/') {
        config.token_file = base_dir + "/" + config.token_file;
      }
      if (!config.token_file.empty()) {
        // A file that rotates may vanish for a moment later on; one missing at start is a mistake.
        auto token = read_file(config.token_file);
        if (!token.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ": tokenFile ", config.token_file, ": ", token.status().message()));
        }
      }
      if (auto s = DataOrFile(*user, "client-certificate", base_dir, read_file, &config.client_cert_pem,
                              &config.client_cert_file);
          !s.ok()) {
        return s;
      }
      if (auto s = DataOrFile(*user, "client-key", base_dir, read_file, &config.client_key_pem,
                              &config.client_key_file);
          !s.ok()) {
        return s;
      }
      if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
        return absl::InvalidArgumentError(path + ": user has a client certificate without a key, or a key without one");
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed kubeconfig: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": unreadable kubeconfig: ", e.what()));
  }
  config.user_agent = DefaultUserAgent();
  return config;
}

absl::StatusOr<KubeConfig> InClusterConfig(const std::string& host, const std::string& port,
                                           const std::string& service_account_dir) {
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError("not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  KubeConfig config;
  bool ipv6 = host.find(':') != std::string::npos;
  config.server = absl::StrCat("https://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":", port);
  config.token_file = service_account_dir + "/token";
  auto token = ReadFileToString(config.token_file);
  if (!token.ok()) return absl::FailedPreconditionError("service account token: " + std::string(token.status().message()));
  config.ca_file = service_account_dir + "/ca.crt";
  auto ca = ReadFileToString(config.ca_file);
  if (!ca.ok()) return absl::FailedPreconditionError("service account CA: " + std::string(ca.status().message()));
  config.ca_pem = *std::move(ca);
  config.user_agent = DefaultUserAgent();
  return config;
}

}  // namespace liken::informers
