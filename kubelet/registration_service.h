// The plugin watcher's Registration service: tells the kubelet what the plugin is and where it listens.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "kubelet/proto/pluginregistration.grpc.pb.h"
#include "nodestate/plugin_observer.h"

namespace liken::kubelet {

// The DRA and health services the plugin serves, in the kubelet's order of preference.
std::vector<std::string> SupportedServiceVersions();

// Answers GetInfo and records the kubelet's NotifyRegistrationStatus. Thread-safe.
class RegistrationService final : public pluginregistration::Registration::Service {
 public:
  // `observer` is borrowed and must outlive the service.
  RegistrationService(std::string driver_name, std::string dra_endpoint, nodestate::PluginObserver* observer);

  grpc::Status GetInfo(grpc::ServerContext* context, const pluginregistration::InfoRequest* request,
                       pluginregistration::PluginInfo* response) override;
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext* context,
                                        const pluginregistration::RegistrationStatus* request,
                                        pluginregistration::RegistrationStatusResponse* response) override;

  // True after the kubelet reported a successful registration (and no failure since). Thread-safe.
  bool registered() const { return registered_.load(); }

 private:
  const std::string driver_name_;
  const std::string dra_endpoint_;
  nodestate::PluginObserver* const observer_;
  std::atomic<bool> registered_{false};
};

}  // namespace liken::kubelet
