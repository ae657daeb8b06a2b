#include "kubelet/dra_service.h"

#include <string>

#include "kubelet/proto/dra_v1.grpc.pb.h"
#include "kubelet/proto/dra_v1beta1.grpc.pb.h"

namespace liken::kubelet {
namespace {

namespace v1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

template <typename ClaimList>
std::vector<ClaimRef> ToClaimRefs(const ClaimList& claims) {
  std::vector<ClaimRef> refs;
  refs.reserve(claims.size());
  for (const auto& c : claims) refs.push_back({c.namespace_(), c.uid(), c.name()});
  return refs;
}

template <typename Device>
void FillDevice(const PreparedResult& r, Device* d) {
  for (const auto& n : r.request_names) d->add_request_names(n);
  d->set_pool_name(r.pool);
  d->set_device_name(r.device);
  for (const auto& id : r.cdi_device_ids) d->add_cdi_device_ids(id);
  if constexpr (requires { d->set_share_id(std::string()); }) {
    if (r.share_id) d->set_share_id(*r.share_id);
  }
}

// One implementation for every API version; `Api` is the generated service namespace's types.
template <typename Service, typename PrepareReq, typename PrepareResp, typename UnprepareReq,
          typename UnprepareResp>
class DraService final : public Service {
 public:
  explicit DraService(ClaimPreparer* preparer) : preparer_(preparer) {}

  grpc::Status NodePrepareResources(grpc::ServerContext*, const PrepareReq* request, PrepareResp* response) override {
    std::vector<ClaimRef> refs = ToClaimRefs(request->claims());
    if (auto s = ValidateClaimRefs(refs); !s.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(s.message()));
    }
    std::vector<PrepareOutcome> outcomes = preparer_->Prepare(refs);
    auto* claims = response->mutable_claims();
    for (size_t i = 0; i < refs.size(); ++i) {
      auto& entry = (*claims)[refs[i].uid];
      if (!outcomes[i].status.ok()) {
        entry.set_error(std::string(outcomes[i].status.message()));
        continue;
      }
      for (const auto& r : outcomes[i].devices) FillDevice(r, entry.add_devices());
    }
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext*, const UnprepareReq* request,
                                      UnprepareResp* response) override {
    std::vector<ClaimRef> refs = ToClaimRefs(request->claims());
    if (auto s = ValidateClaimRefs(refs); !s.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(s.message()));
    }
    std::vector<absl::Status> results = preparer_->Unprepare(refs);
    auto* claims = response->mutable_claims();
    for (size_t i = 0; i < refs.size(); ++i) {
      auto& entry = (*claims)[refs[i].uid];
      if (!results[i].ok()) entry.set_error(std::string(results[i].message()));
    }
    return grpc::Status::OK;
  }

 private:
  ClaimPreparer* const preparer_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewDraV1Service(ClaimPreparer* preparer) {
  return std::make_unique<DraService<v1::DRAPlugin::Service, v1::NodePrepareResourcesRequest,
                                     v1::NodePrepareResourcesResponse, v1::NodeUnprepareResourcesRequest,
                                     v1::NodeUnprepareResourcesResponse>>(preparer);
}

std::unique_ptr<grpc::Service> NewDraV1beta1Service(ClaimPreparer* preparer) {
  return std::make_unique<DraService<v1beta1::DRAPlugin::Service, v1beta1::NodePrepareResourcesRequest,
                                     v1beta1::NodePrepareResourcesResponse, v1beta1::NodeUnprepareResourcesRequest,
                                     v1beta1::NodeUnprepareResourcesResponse>>(preparer);
}

}  // namespace liken::kubelet
