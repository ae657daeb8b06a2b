#include "discovery/slice_builder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace liken::discovery {

namespace {

// One slice of the layout: devices [first, last) of the sorted list, and its name's suffix after the primary name.
struct SliceSpan {
  size_t first;
  size_t last;
  std::string suffix;
};

// The layout of `devices` (sorted by name): blocks of 64 devices (kMaxDevicesPerSliceWithTaintsOrCounters), two
// blocks to a slice (128, kMaxDevicesPerSlice) unless one of the two holds a device with a taint (or consumes
// counters); then the pair is two slices, the first keeping the pair's name, the second named "<pair>b" ("-0b",
// "-1b", ...). So the pool without taints is laid out as before the 64-device rule (slice j holds devices
// [128j, 128j+128), named "" for j = 0, "-j" after), and a taint splits only the slice that holds it: every other
// device stays in the slice of the same name with the same neighbours. Always at least one (empty) slice.
std::vector<SliceSpan> LaySlices(const std::vector<apis::SliceDevice>& devices) {
  constexpr size_t kBlock = apis::kMaxDevicesPerSliceWithTaintsOrCounters;
  static_assert(apis::kMaxDevicesPerSlice == 2 * kBlock, "a slice of two blocks must hold the API's maximum");
  std::vector<SliceSpan> spans;
  for (size_t pair = 0, first = 0; first < devices.size() || pair == 0; ++pair, first += 2 * kBlock) {
    const std::string name = pair == 0 ? "" : absl::StrCat("-", pair);
    const size_t middle = std::min(devices.size(), first + kBlock);
    const size_t last = std::min(devices.size(), first + 2 * kBlock);
    const bool limited = std::any_of(devices.begin() + static_cast<std::ptrdiff_t>(first),
                                     devices.begin() + static_cast<std::ptrdiff_t>(last),
                                     [](const auto& d) { return apis::HasTaintsOrConsumesCounters(d); });
    if (limited && last > middle) {
      spans.push_back({first, middle, name});
      spans.push_back({middle, last, absl::StrCat("-", pair, "b")});
    } else {
      spans.push_back({first, last, name});
    }
  }
  return spans;
}

}  // namespace

std::string PrimarySliceName(const std::string& node_name) { return absl::StrCat(node_name, "-", kDriverName); }

std::vector<apis::ResourceSlice> BuildResourceSlices(const std::string& node_name, const Inventory& inventory,
                                                     int64_t generation) {
  return BuildResourceSlices(node_name, inventory, generation, {});
}

std::vector<apis::ResourceSlice> BuildResourceSlices(const std::string& node_name, const Inventory& inventory,
                                                     int64_t generation, const std::vector<apis::SliceDevice>& also) {
  std::vector<apis::ResourceSlice> slices;
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
  for (const auto& [first, last, name] : LaySlices(devices)) {
    apis::ResourceSlice slice;
    slice.metadata.name = absl::StrCat(PrimarySliceName(node_name), name);
    slice.driver = kDriverName;
    slice.node_name = node_name;
    slice.pool.name = node_name;
    slice.pool.generation = generation;
    for (size_t k = first; k < last; ++k) slice.devices.push_back(std::move(devices[k]));
    slices.push_back(std::move(slice));
  }
  for (auto& slice : slices) slice.pool.resource_slice_count = static_cast<int64_t>(slices.size());
  return slices;
}

}  // namespace liken::discovery
