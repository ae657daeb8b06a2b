#include "controller/claim_status_metrics.h"

#include <string>

namespace liken::controller {

ClaimStatusMetrics::ClaimStatusMetrics(prometheus::Registry& registry)
    : writes_(&prometheus::BuildCounter()
                   .Name("liken_claim_status_writes_total")
                   .Help("ResourceClaim status.devices writes (server-side apply of the status) by result.")
                   .Register(registry)) {
  for (const char* result : {"success", "conflict", "error"}) writes_->Add({{"result", result}});
}

void ClaimStatusMetrics::OnClaimStatusWrite(std::string_view result) {
  writes_->Add({{"result", std::string(result)}}).Increment();
}

}  // namespace liken::controller
