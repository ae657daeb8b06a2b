// A test kubelet: finds the plugin's registration socket, registers it as the kubelet does, then prepares
// and unprepares claims over the advertised DRA socket with the chosen API version.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "kubelet/claim_ref.h"

namespace liken::testing {

// Which DRAPlugin service the kubelet speaks.
enum class DraVersion { kV1, kV1beta1 };

// "v1.DRAPlugin" / "v1beta1.DRAPlugin".
std::string ServiceName(DraVersion version);

// One device of a claim's answer.
struct AnsweredDevice {
  std::vector<std::string> request_names;
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;
  std::optional<std::string> share_id;
};

// One claim's answer: its devices or its error.
struct ClaimAnswer {
  std::vector<AnsweredDevice> devices;
  std::string error;
};

// What GetInfo returned.
struct RegisteredPlugin {
  std::string type;
  std::string name;
  std::string endpoint;
  std::vector<std::string> supported_versions;
  std::string registration_socket;
};

// A kubelet's client side of one plugin. Thread-safe (calls share one channel, as the kubelet's do).
class TestKubelet {
 public:
  // Finds the only `<driver>[-<podUID>]-reg.sock` in `<kubelet_root>/plugins_registry`, calls GetInfo,
  // checks the type and that `version` is offered, calls NotifyRegistrationStatus(true) and connects to the
  // advertised endpoint.
  static absl::StatusOr<std::unique_ptr<TestKubelet>> Register(const std::string& kubelet_root, DraVersion version);

  // NodePrepareResources; a gRPC failure becomes a Status with the same code. Thread-safe.
  absl::StatusOr<std::map<std::string, ClaimAnswer>> Prepare(const std::vector<kubelet::ClaimRef>& claims);

  // NodeUnprepareResources: claim UID -> error (empty on success). Thread-safe.
  absl::StatusOr<std::map<std::string, std::string>> Unprepare(const std::vector<kubelet::ClaimRef>& claims);

  // The plugin as registered. Thread-safe.
  const RegisteredPlugin& plugin() const { return plugin_; }

  // The DRA service channel (for health streams). Thread-safe.
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  TestKubelet(DraVersion version, RegisteredPlugin plugin, std::shared_ptr<grpc::Channel> channel);

  const DraVersion version_;
  const RegisteredPlugin plugin_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace liken::testing
