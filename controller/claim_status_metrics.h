// The claim status writer's metrics, registered beside the daemon's others; every series exists at zero.
#pragma once

#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include "controller/claim_status_controller.h"

namespace liken::controller {

// liken_claim_status_writes_total{result="success|conflict|error"}. Thread-safe.
class ClaimStatusMetrics final : public ClaimStatusObserver {
 public:
  // Registers the series in `registry` (which must outlive this object).
  explicit ClaimStatusMetrics(prometheus::Registry& registry);

  // ClaimStatusObserver.
  void OnClaimStatusWrite(std::string_view result) override;

 private:
  prometheus::Family<prometheus::Counter>* writes_;
};

}  // namespace liken::controller
