// Renders an Inventory for the read-only commands: the hardware report (`liken-dra report`), in JSON or as
// text, and the ResourceSlices the node would publish as a v1 List (`liken-dra scan`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "discovery/inventory.h"

namespace liken::discovery {

// The report's JSON form: {"published": [...], "notes": [...], "withheld": [...], "leftOut": [...],
// "unclaimed": [...], "warnings": [...]}.
// Thread-safe (pure).
nlohmann::ordered_json ReportToJson(const Inventory& inventory);

// The report's text form: a table of published devices, the withheld ones, the left-out ones (a
// driver bound, nothing to deliver), then the unclaimed hardware as
// commented `spec.modules` lines an operator can paste. Thread-safe (pure).
std::string ReportToText(const Inventory& inventory);

// The ResourceSlices `node` would publish for `inventory`, as a v1 List in kubectl's field order (no
// server-set fields). Internal error when a built slice fails the API's validation. Thread-safe (pure).
absl::StatusOr<nlohmann::ordered_json> ResourceSliceList(const std::string& node, const Inventory& inventory);

// An attribute value as plain JSON (string, bool or number). Thread-safe.
nlohmann::ordered_json PlainAttributeValue(const AttributeValue& value);

}  // namespace liken::discovery
