#include "kubelet/health_service.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "kubelet/device_health.h"
#include "kubelet/proto/health_v1.grpc.pb.h"
#include "kubelet/proto/health_v1alpha1.grpc.pb.h"

namespace liken::kubelet {
namespace {

// Cancellation by the kubelet is noticed at least this often.
constexpr absl::Duration kCancelPoll = absl::Seconds(1);

template <typename Service, typename Request, typename Response, typename HealthStatusEnum>
class HealthService final : public Service {
 public:
  HealthService(HealthStreamOptions options, DeviceCatalog* catalog, const ClaimPreparer* preparer)
      : options_(std::move(options)), catalog_(catalog), preparer_(preparer) {}

  grpc::Status NodeWatchResources(grpc::ServerContext* context, const Request*,
                                  grpc::ServerWriter<Response>* writer) override {
    while (!catalog_->closed() && !context->IsCancelled()) {
      auto snapshot = catalog_->Current();
      Response response;
      const int64_t now = absl::ToUnixSeconds(absl::Now());
      for (const auto& h : ComputeDeviceHealth(snapshot->inventory, preparer_->HeldDevices())) {
        auto* d = response.add_devices();
        d->mutable_device()->set_pool_name(options_.pool);
        d->mutable_device()->set_device_name(h.device);
        d->set_health(h.healthy ? HealthStatusEnum::HEALTHY : HealthStatusEnum::UNHEALTHY);
        d->set_last_updated_time(now);
        d->set_health_check_timeout_seconds(absl::ToInt64Seconds(options_.timeout));
        d->set_message(h.message);
      }
      if (!writer->Write(response)) break;
      const absl::Time resend_at = absl::Now() + options_.resend_interval;
      while (!catalog_->closed() && !context->IsCancelled()) {
        absl::Duration left = resend_at - absl::Now();
        if (left <= absl::ZeroDuration()) break;
        if (catalog_->AwaitNewerThan(snapshot->generation, std::min(left, kCancelPoll)) > snapshot->generation) break;
      }
    }
    return grpc::Status::OK;
  }

 private:
  const HealthStreamOptions options_;
  DeviceCatalog* const catalog_;
  const ClaimPreparer* const preparer_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewHealthV1Service(HealthStreamOptions options, DeviceCatalog* catalog,
                                                  const ClaimPreparer* preparer) {
  return std::make_unique<HealthService<::v1::DRAResourceHealth::Service, ::v1::NodeWatchResourcesRequest,
                                        ::v1::NodeWatchResourcesResponse, ::v1::HealthStatus>>(
      std::move(options), catalog, preparer);
}

std::unique_ptr<grpc::Service> NewHealthV1alpha1Service(HealthStreamOptions options, DeviceCatalog* catalog,
                                                        const ClaimPreparer* preparer) {
  return std::make_unique<
      HealthService<::v1alpha1::DRAResourceHealth::Service, ::v1alpha1::NodeWatchResourcesRequest,
                    ::v1alpha1::NodeWatchResourcesResponse, ::v1alpha1::HealthStatus>>(std::move(options), catalog,
                                                                                        preparer);
}

}  // namespace liken::kubelet
