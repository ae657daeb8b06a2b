#include "discovery/slice_builder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace liken::discovery {

std::string PrimarySliceName(const std::string& node_name) { return absl::StrCat(node_name, "-", kDriverName); }

std::vector<apis::ResourceSlice> BuildResourceSlices(const std::string& node_name, const Inventory& inventory,
                                                     int64_t generation) {
  return BuildResourceSlices(node_name, inventory, generation, {});
}

std::vector<apis::ResourceSlice> BuildResourceSlices(const std::string& node_name, const Inventory& inventory,
                                                     int64_t generation, const std::vector<apis::SliceDevice>& also) {
  std::vector<apis::SliceDevice> devices;
  devices.reserve(inventory.published.size() + also.size());
  for (const auto& d : inventory.published) {
    apis::SliceDevice device;
    device.name = d.name;
    device.attributes = d.attributes;
    if (d.allow_multiple_allocations) device.allow_multiple_allocations = true;
    devices.push_back(std::move(device));
  }
  for (const auto& d : also) {
    if (inventory.Find(d.name) == nullptr) devices.push_back(d);
  }
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  size_t count = std::max<size_t>(1, (devices.size() + apis::kMaxDevicesPerSlice - 1) / apis::kMaxDevicesPerSlice);
  std::vector<apis::ResourceSlice> slices(count);
  for (size_t i = 0; i < count; ++i) {
    auto& slice = slices[i];
    slice.metadata.name = i == 0 ? PrimarySliceName(node_name) : absl::StrCat(PrimarySliceName(node_name), "-", i);
    slice.driver = kDriverName;
    slice.node_name = node_name;
    slice.pool.name = node_name;
    slice.pool.generation = generation;
    slice.pool.resource_slice_count = static_cast<int64_t>(count);
    size_t begin = i * apis::kMaxDevicesPerSlice;
    size_t end = std::min(devices.size(), begin + apis::kMaxDevicesPerSlice);
    for (size_t k = begin; k < end; ++k) slice.devices.push_back(std::move(devices[k]));
  }
  return slices;
}

}  // namespace liken::discovery
