// Lays an Inventory out as the node's ResourceSlices (one pool, as many slices as the API's device limits need:
// 128 a slice, 64 in a slice that holds a tainted device).
#pragma once

#include <string>
#include <vector>

#include "apis/resource_slice.h"
#include "discovery/inventory.h"

namespace liken::discovery {

// The name of the node's first slice: "<node>-liken.sh".
std::string PrimarySliceName(const std::string& node_name);

// Builds the slices of the pool named after `node_name`: devices sorted by name, 128 per slice, the
// first slice `<node>-liken.sh`, the next `<node>-liken.sh-1`, ...; a slice whose 128 devices include one with a
// taint (or that consumes counters) is split in two halves of 64, the second named `<that slice>-<j>b`
// (`<node>-liken.sh-0b`, `<node>-liken.sh-1b`, ...), so every slice passes the API's 64/128 rule and the
// other slices keep their names and devices. Every slice carries `generation` and `resourceSliceCount`. A node without devices gets one empty slice (the pool exists, and says so).
// No server-set fields and no owner reference (the caller adds one). Thread-safe (pure).
std::vector<apis::ResourceSlice> BuildResourceSlices(const std::string& node_name, const Inventory& inventory,
                                                     int64_t generation);

// The same, with `also` (devices the scan did not find that the node still publishes: a claimed device that went
// away, tainted) laid out among the inventory's devices by name. A name of `also` that the inventory has is left
// out. Thread-safe (pure).
std::vector<apis::ResourceSlice> BuildResourceSlices(const std::string& node_name, const Inventory& inventory,
                                                     int64_t generation, const std::vector<apis::SliceDevice>& also);

}  // namespace liken::discovery
