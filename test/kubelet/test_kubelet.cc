#include "test/kubelet/test_kubelet.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "kubelet/proto/dra_v1.grpc.pb.h"
#include "kubelet/proto/dra_v1beta1.grpc.pb.h"
#include "kubelet/proto/pluginregistration.grpc.pb.h"

namespace liken::testing {
namespace {

namespace v1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

std::unique_ptr<grpc::ClientContext> Context() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(45));  // the kubelet's timeout
  return ctx;
}

template <typename Request>
Request MakeRequest(const std::vector<kubelet::ClaimRef>& claims) {
  Request req;
  for (const auto& c : claims) {
    auto* pc = req.add_claims();
    pc->set_namespace_(c.namespace_name);
    pc->set_uid(c.uid);
    pc->set_name(c.name);
  }
  return req;
}

template <typename Stub, typename Req, typename Resp>
absl::StatusOr<std::map<std::string, ClaimAnswer>> DoPrepare(const std::shared_ptr<grpc::Channel>& channel,
                                                             const std::vector<kubelet::ClaimRef>& claims) {
  auto stub = Stub::NewStub(channel);
  Req req = MakeRequest<Req>(claims);
  Resp resp;
  auto ctx = Context();
  grpc::Status s = stub->NodePrepareResources(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc(s);
  std::map<std::string, ClaimAnswer> out;
  for (const auto& [uid, claim] : resp.claims()) {
    ClaimAnswer answer;
    answer.error = claim.error();
    for (const auto& d : claim.devices()) {
      AnsweredDevice ad;
      ad.request_names.assign(d.request_names().begin(), d.request_names().end());
      ad.pool = d.pool_name();
      ad.device = d.device_name();
      ad.cdi_device_ids.assign(d.cdi_device_ids().begin(), d.cdi_device_ids().end());
      if constexpr (requires { d.has_share_id(); }) {
        if (d.has_share_id()) ad.share_id = d.share_id();
      }
      answer.devices.push_back(std::move(ad));
    }
    out[uid] = std::move(answer);
  }
  return out;
}

template <typename Stub, typename Req, typename Resp>
absl::StatusOr<std::map<std::string, std::string>> DoUnprepare(const std::shared_ptr<grpc::Channel>& channel,
                                                               const std::vector<kubelet::ClaimRef>& claims) {
  auto stub = Stub::NewStub(channel);
  Req req = MakeRequest<Req>(claims);
  Resp resp;
  auto ctx = Context();
  grpc::Status s = stub->NodeUnprepareResources(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc(s);
  std::map<std::string, std::string> out;
  for (const auto& [uid, claim] : resp.claims()) out[uid] = claim.error();
  return out;
}

}  // namespace

std::string ServiceName(DraVersion version) {
  return version == DraVersion::kV1 ? "v1.DRAPlugin" : "v1beta1.DRAPlugin";
}

TestKubelet::TestKubelet(DraVersion version, RegisteredPlugin plugin, std::shared_ptr<grpc::Channel> channel)
    : version_(version), plugin_(std::move(plugin)), channel_(std::move(channel)) {}

absl::StatusOr<std::unique_ptr<TestKubelet>> TestKubelet::Register(const std::string& kubelet_root,
                                                                   DraVersion version) {
  const std::string dir = absl::StrCat(kubelet_root, "/plugins_registry");
  auto names = ListDirectory(dir);
  if (!names.ok()) return names.status();
  std::vector<std::string> sockets;
  for (const auto& n : *names) {
    if (absl::EndsWith(n, "-reg.sock")) sockets.push_back(n);
  }
  if (sockets.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("expected one registration socket in ", dir, ", found: ", absl::StrJoin(sockets, ", ")));
  }
  RegisteredPlugin plugin;
  plugin.registration_socket = absl::StrCat(dir, "/", sockets[0]);
  auto reg_channel =
      grpc::CreateChannel(absl::StrCat("unix:", plugin.registration_socket), grpc::InsecureChannelCredentials());
  auto reg = pluginregistration::Registration::NewStub(reg_channel);
  pluginregistration::PluginInfo info;
  {
    auto ctx = Context();
    grpc::Status s = reg->GetInfo(ctx.get(), pluginregistration::InfoRequest(), &info);
    if (!s.ok()) return FromGrpc(s);
  }
  plugin.type = info.type();
  plugin.name = info.name();
  plugin.endpoint = info.endpoint();
  plugin.supported_versions.assign(info.supported_versions().begin(), info.supported_versions().end());
  std::string error;
  if (plugin.type != "DRAPlugin") error = absl::StrCat("plugin type ", plugin.type, " is not DRAPlugin");
  if (std::find(plugin.supported_versions.begin(), plugin.supported_versions.end(), ServiceName(version)) ==
      plugin.supported_versions.end()) {
    error = absl::StrCat("plugin does not offer ", ServiceName(version));
  }
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(error.empty());
  status.set_error(error);
  pluginregistration::RegistrationStatusResponse status_response;
  {
    auto ctx = Context();
    grpc::Status s = reg->NotifyRegistrationStatus(ctx.get(), status, &status_response);
    if (!s.ok()) return FromGrpc(s);
  }
  if (!error.empty()) return absl::FailedPreconditionError(error);
  auto channel = grpc::CreateChannel(absl::StrCat("unix:", plugin.endpoint), grpc::InsecureChannelCredentials());
  return std::unique_ptr<TestKubelet>(new TestKubelet(version, std::move(plugin), std::move(channel)));
}

absl::StatusOr<std::map<std::string, ClaimAnswer>> TestKubelet::Prepare(const std::vector<kubelet::ClaimRef>& claims) {
  if (version_ == DraVersion::kV1) {
    return DoPrepare<v1::DRAPlugin, v1::NodePrepareResourcesRequest, v1::NodePrepareResourcesResponse>(
        channel_, claims);
  }
  return DoPrepare<v1beta1::DRAPlugin, v1beta1::NodePrepareResourcesRequest, v1beta1::NodePrepareResourcesResponse>(
      channel_, claims);
}

absl::StatusOr<std::map<std::string, std::string>> TestKubelet::Unprepare(
    const std::vector<kubelet::ClaimRef>& claims) {
  if (version_ == DraVersion::kV1) {
    return DoUnprepare<v1::DRAPlugin, v1::NodeUnprepareResourcesRequest, v1::NodeUnprepareResourcesResponse>(
        channel_, claims);
  }
  return DoUnprepare<v1beta1::DRAPlugin, v1beta1::NodeUnprepareResourcesRequest,
                     v1beta1::NodeUnprepareResourcesResponse>(channel_, claims);
}

}  // namespace liken::testing
