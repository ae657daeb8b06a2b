// AMD compute: /dev/kfd, the one node outside every PCI subtree that liken delivers.
//
// ROCm opens /dev/kfd beside a GPU's render node. The kernel registers kfd as a virtual device
// (/sys/devices/virtual/kfd/kfd), so the delivery walk never reaches it. The render half of a GPU bound to
// amdgpu also delivers it: through kfd a process can use only the GPUs whose render node it holds open, so
// it grants nothing beyond the render node.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "discovery/device_rules.h"
#include "discovery/inventory.h"

namespace liken::discovery {

// The node's path, and the driver whose render halves deliver it.
inline constexpr char kKfdPath[] = "/dev/kfd";
inline constexpr char kKfdDriver[] = "amdgpu";

// Why /dev/kfd is delivered, in the words the report prints.
inline constexpr char kKfdNote[] =
    "/dev/kfd (AMD compute, ROCm) is delivered with the render half of every GPU bound to amdgpu: through it "
    "the kernel lets a process use only the GPUs whose render node it holds open, so it grants nothing more";

// Reads the kfd device at <sysfs_root>/devices/virtual/kfd/kfd. nullopt when it is absent (amdkfd not
// loaded); a present device that is not exactly the kfd node (subsystem, DEVNAME, `dev`) is nullopt with a
// warning. Thread-safe.
std::optional<DeviceNode> ReadKfdNode(const std::string& sysfs_root, std::vector<ScanWarning>* warnings);

// Adds `kfd` to the render half (the split with render_node) of a unit bound to `driver`, when the driver is
// amdgpu and kfd exists; otherwise changes nothing. Keeps the split's nodes sorted. Thread-safe (pure).
void AddAmdComputeNode(const std::string& driver, const std::optional<DeviceNode>& kfd, DeliveryDecision* decision);

// True when `device` delivers /dev/kfd. Thread-safe.
bool DeliversKfd(const PublishedDevice& device);

}  // namespace liken::discovery
