#include "kubelet/runtime_cdi.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
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

}  // namespace

const char* RuntimeCdiStateName(RuntimeCdiState state) {
  switch (state) {
    case RuntimeCdiState::kEnabled: return "enabled";
    case RuntimeCdiState::kDisabled: return "disabled";
    case RuntimeCdiState::kUnknown: break;
  }
  return "unknown";
}

RuntimeCdi JudgeRuntimeCdi(std::string_view runtime_name, std::string_view runtime_version,
                           const std::map<std::string, std::string>& info) {
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
    return out;
  }
  if (name == "cri-o") {
    if (version && *version >= std::make_pair(1, 23)) {
      out.state = RuntimeCdiState::kEnabled;
      out.reason = "CRI-O has CDI on since 1.23";
    } else {
      out.reason = "CRI-O before 1.23: check that it resolves CDI devices";
    }
    return out;
  }
  out.reason = "liken-dra does not know this runtime: check that it resolves CDI devices";
  return out;
}

absl::StatusOr<RuntimeCdi> CheckRuntimeCdi(const std::string& endpoint, absl::Duration timeout) {
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
  return JudgeRuntimeCdi(version.runtime_name(), version.runtime_version(), info);
}

}  // namespace liken::kubelet
