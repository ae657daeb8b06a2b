// Renders an Inventory as the hardware report (`liken-dra report`), in JSON or as text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "discovery/inventory.h"

namespace liken::discovery {

// The report's JSON form: {"published": [...], "withheld": [...], "unclaimed": [...], "warnings": [...]}.
// Thread-safe (pure).
nlohmann::ordered_json ReportToJson(const Inventory& inventory);

// The report's text form: a table of published devices, the withheld ones, then the unclaimed hardware as
// commented `spec.modules` lines an operator can paste. Thread-safe (pure).
std::string ReportToText(const Inventory& inventory);

// An attribute value as plain JSON (string, bool or number). Thread-safe.
nlohmann::ordered_json PlainAttributeValue(const AttributeValue& value);

}  // namespace liken::discovery
