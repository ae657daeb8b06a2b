#include "kubelet/runtime_cdi.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kubelet/proto/cri_v1.grpc.pb.h"

namespace liken::kubelet {
namespace {

// (major, minor) of "v1.7.27", "2.1.4", "1.6.20~ds1"; nullopt when it does not start with two numbers.
std::optional<std::pair<int, int>> MajorMinor(std::string_view version) {
  if (!version.empty() && (version[0] == 'v' || version[0] == 'V')) version.remove_prefix(1);
  int major = 0, minor = 0;
  if (std::sscanf(std::string(version).c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::make_pair(major, minor);
}

// The first boolean named `key` anywhere in `j` (depth first), or nullopt.
std::optional<bool> FindBool(const nlohmann::json& j, const std::string& key, int depth = 0) {
  if (depth > 16) return std::nullopt;
  if (j.is_object()) {
    if (auto it = j.find(key); it != j.end() && it->is_boolean()) return it->get<bool>();
    for (const auto& [k, v] : j.items()) {
      if (auto found = FindBool(v, key, depth + 1)) return found;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (auto found = FindBool(v, key, depth + 1)) return found;
    }
  }
  return std::nullopt;
}

// The first array of strings named one of `keys` anywhere in `j` (depth first), or nullopt.
std::optional<std::vector<std::string>> FindStrings(const nlohmann::json& j, const std::vector<std::string>& keys,
                                                    int depth = 0) {
  if (depth > 16) return std::nullopt;
  if (j.is_object()) {
    for (const auto& key : keys) {
      auto it = j.find(key);
      if (it == j.end() || !it->is_array()) continue;
      std::vector<std::string> out;
      for (const auto& v : *it) {
        if (v.is_string()) out.push_back(v.get<std::string>());
      }
      return out;
    }
    for (const auto& [k, v] : j.items()) {
      if (auto found = FindStrings(v, keys, depth + 1)) return found;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (auto found = FindStrings(v, keys, depth + 1)) return found;
    }
  }
  return std::nullopt;
}

// A directory as the comparison reads it: no trailing '/', and /var/run as /run (one is a link to the other on
// every distribution a kubelet runs on).
std::string DirKey(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir == "/var/run" || dir.rfind("/var/run/", 0) == 0) dir = dir.substr(4);
  return dir;
}

// The runtime's CDI spec directories from its status info: the first `cdiSpecDirs` (containerd) or
// `cdi_spec_dirs` (CRI-O's TOML name) in any JSON value of it; nullopt when none shows them.
std::optional<std::vector<std::string>> SpecDirsFromInfo(const std::map<std::string, std::string>& info) {
  for (const auto& [key, value] : info) {
    auto j = nlohmann::json::parse(value, nullptr, false);
    if (j.is_discarded()) continue;
    if (auto dirs = FindStrings(j, {"cdiSpecDirs", "cdi_spec_dirs"})) return dirs;
  }
  return std::nullopt;
}

// Turns an "enabled" verdict into kOutsideSpecDirs when the runtime's CDI spec directories do not hold `cdi_root`.
void CheckSpecDirs(const std::map<std::string, std::string>& info, const RuntimeCdiOptions& options,
                   const char* setting, RuntimeCdi* out) {
  auto dirs = SpecDirsFromInfo(info);
  const bool shown = dirs.has_value();
  out->spec_dirs = shown ? *dirs : std::vector<std::string>{"/etc/cdi", "/var/run/cdi"};
  const std::string root = DirKey(options.cdi_root);
  for (const auto& dir : out->spec_dirs) {
    if (DirKey(dir) == root) {
      absl::StrAppend(&out->reason, "; it reads CDI specs from ", absl::StrJoin(out->spec_dirs, ", "),
                      shown ? "" : " (its default)", ", the driver's --cdi-root among them");
      return;
    }
  }
  out->state = RuntimeCdiState::kOutsideSpecDirs;
  absl::StrAppend(&out->reason, "; but it reads CDI specs from ", absl::StrJoin(out->spec_dirs, ", "),
                  shown ? "" : absl::StrCat(" (its default: its status does not show ", setting, ")"),
                  ", not from the driver's --cdi-root ", options.cdi_root,
                  ": every pod with a claim fails with 'unresolvable CDI devices'. Add ", options.cdi_root, " to ",
                  setting, " and restart the runtime, or set the chart's cdiRoot to one of them");
}

}  // namespace

const char* RuntimeCdiStateName(RuntimeCdiState state) {
  switch (state) {
    case RuntimeCdiState::kEnabled: return "enabled";
    case RuntimeCdiState::kDisabled: return "disabled";
    case RuntimeCdiState::kOutsideSpecDirs: return "outside_spec_dirs";
    case RuntimeCdiState::kUnknown: break;
  }
  return "unknown";
}

RuntimeCdi JudgeRuntimeCdi(std::string_view runtime_name, std::string_view runtime_version,
                           const std::map<std::string, std::string>& info, const RuntimeCdiOptions& options) {
  RuntimeCdi out;
  out.runtime = std::string(runtime_name) + " " + std::string(runtime_version);
  const std::string name = absl::AsciiStrToLower(std::string(runtime_name));
  const auto version = MajorMinor(runtime_version);
  if (name == "containerd") {
    std::optional<bool> enabled;
    if (auto it = info.find("config"); it != info.end()) {
      auto config = nlohmann::json::parse(it->second, nullptr, false);
      if (!config.is_discarded()) enabled = FindBool(config, "enableCDI");
    }
    if (enabled == true) {
      out.state = RuntimeCdiState::kEnabled;
      out.reason = "its CRI configuration has enable_cdi on";
    } else if (enabled == false) {
      out.state = RuntimeCdiState::kDisabled;
      out.reason = "its CRI configuration has enable_cdi off: set enable_cdi = true in its CRI plugin section "
                   "(1.7: [plugins.\"io.containerd.grpc.v1.cri\"]) and restart containerd";
    } else if (version && *version < std::make_pair(1, 7)) {
      out.state = RuntimeCdiState::kDisabled;
      out.reason = "containerd before 1.7 has no CDI: upgrade to 1.7 (with enable_cdi = true) or 2.x";
    } else if (version && version->first >= 2) {
      out.state = RuntimeCdiState::kEnabled;
      out.reason = "containerd 2.x has CDI on by default and its configuration does not turn it off";
    } else {
      out.reason = "its status does not show its CRI configuration; check enable_cdi in /etc/containerd/config.toml";
    }
    if (out.state == RuntimeCdiState::kEnabled) {
      CheckSpecDirs(info, options, "cdi_spec_dirs in its CRI plugin section", &out);
    }
    return out;
  }
  if (name == "cri-o") {
    if (version && *version >= std::make_pair(1, 23)) {
      out.state = RuntimeCdiState::kEnabled;
      out.reason = "CRI-O has CDI on since 1.23";
      CheckSpecDirs(info, options, "cdi_spec_dirs in crio.conf's [crio.runtime]", &out);
    } else {
      out.reason = "CRI-O before 1.23: check that it resolves CDI devices";
    }
    return out;
  }
  out.reason = "liken-dra does not know this runtime: check that it resolves CDI devices";
  return out;
}

absl::StatusOr<RuntimeCdi> CheckRuntimeCdi(const std::string& endpoint, absl::Duration timeout,
                                           const RuntimeCdiOptions& options) {
  const std::string target = endpoint.rfind("unix:", 0) == 0 ? endpoint : absl::StrCat("unix:", endpoint);
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = runtime::v1::RuntimeService::NewStub(channel);
  const auto deadline = absl::ToChronoTime(absl::Now() + timeout);
  auto failed = [&](const char* call, const grpc::Status& s) {
    return absl::UnavailableError(absl::StrCat("the container runtime at ", endpoint, " did not answer ", call, ": ",
                                               s.error_message()));
  };
  runtime::v1::VersionResponse version;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline);
    runtime::v1::VersionRequest request;
    request.set_version("v1");
    if (grpc::Status s = stub->Version(&ctx, request, &version); !s.ok()) return failed("Version", s);
  }
  runtime::v1::StatusResponse status;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline);
    runtime::v1::StatusRequest request;
    request.set_verbose(true);
    if (grpc::Status s = stub->Status(&ctx, request, &status); !s.ok()) return failed("Status", s);
  }
  std::map<std::string, std::string> info(status.info().begin(), status.info().end());
  return JudgeRuntimeCdi(version.runtime_name(), version.runtime_version(), info, options);
}

}  // namespace liken::kubelet
