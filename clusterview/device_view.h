// `kubectl liken devices`: one row per published liken device, with who holds it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "apis/resource_slice.h"
#include "clusterview/cluster_index.h"
#include "clusterview/output_format.h"

namespace liken::clusterview {

// Which devices to show; every set field must match.
struct DeviceFilter {
  std::vector<std::string> nodes;      // empty: every node
  std::string subsystem;               // liken.sh/subsystem equals this; empty: any
  std::map<std::string, std::string> attributes;  // liken attribute name ("serial" or "liken.sh/serial") → value text
  bool held_only = false;
  bool free_only = false;
};

// Parses "NAME=VALUE" (an --attribute value) into `filter`. InvalidArgument without '=' or with an empty name.
// Thread-safe.
absl::Status AddAttributeFilter(const std::string& text, DeviceFilter* filter);

// One published liken device.
struct DeviceRow {
  std::string node;
  std::string pool;
  std::string slice;
  apis::SliceDevice device;
  std::vector<DeviceHolder> holders;
};

// The devices of the snapshot that pass `filter`, sorted by node, then device name. Thread-safe.
std::vector<DeviceRow> BuildDeviceRows(const ClusterIndex& index, const DeviceFilter& filter);

// The rows as `format` prints them: columns NODE DEVICE SUBSYSTEM IDENTITY SHARING TAINTS HELD-BY (wide adds
// ADDRESS, DRIVER, SLICE), or a document of kind LikenDeviceList. Thread-safe.
std::string RenderDevices(const std::vector<DeviceRow>& rows, OutputFormat format);

// "ns/claim -> pod1,pod2" for each holder, joined by "; ". Thread-safe.
std::string HoldersText(const std::vector<DeviceHolder>& holders);

}  // namespace liken::clusterview
