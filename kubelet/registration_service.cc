#include "kubelet/registration_service.h"

#include "common/log.h"

namespace liken::kubelet {

std::vector<std::string> SupportedServiceVersions() {
  return {"v1.DRAPlugin", "v1beta1.DRAPlugin", "v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth"};
}

RegistrationService::RegistrationService(std::string driver_name, std::string dra_endpoint, nodestate::PluginObserver* observer)
    : driver_name_(std::move(driver_name)), dra_endpoint_(std::move(dra_endpoint)), observer_(observer) {}

grpc::Status RegistrationService::GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                                          pluginregistration::PluginInfo* response) {
  response->set_type("DRAPlugin");
  response->set_name(driver_name_);
  response->set_endpoint(dra_endpoint_);
  for (const auto& v : SupportedServiceVersions()) response->add_supported_versions(v);
  return grpc::Status::OK;
}

grpc::Status RegistrationService::NotifyRegistrationStatus(grpc::ServerContext*,
                                                           const pluginregistration::RegistrationStatus* request,
                                                           pluginregistration::RegistrationStatusResponse*) {
  registered_.store(request->plugin_registered());
  if (request->plugin_registered()) {
    LogInfo("kubelet registered the plugin", {{"driver", driver_name_}, {"endpoint", dra_endpoint_}});
  } else {
    LogError("kubelet refused the plugin registration", {{"driver", driver_name_}, {"error", request->error()}});
  }
  observer_->OnRegistration(request->plugin_registered(), request->error());
  return grpc::Status::OK;
}

}  // namespace liken::kubelet
