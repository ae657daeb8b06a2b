#include "discovery/device_rules.h"

#include <string.h>  // strverscmp (GNU)

#include <algorithm>
#include <set>

#include "apis/resource_slice.h"

namespace liken::discovery {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool IsRenderNode(const DeviceNode& n) { return n.subsystem == "drm" && StartsWith(n.path, "/dev/dri/renderD"); }
bool IsCardNode(const DeviceNode& n) { return n.subsystem == "drm" && StartsWith(n.path, "/dev/dri/card"); }

void SortNodes(std::vector<DeviceNode>* nodes) {
  std::sort(nodes->begin(), nodes->end(),
            [](const DeviceNode& a, const DeviceNode& b) { return NaturalPathLess(a.path, b.path); });
}

bool IsFlashNode(const WalkedNode& w) { return w.node.subsystem == "mtd"; }

DeliveryDecision DecideGpu(const WalkResult& walk) {
  auto split = [](const char* suffix, const char* subsystem) {
    DeliverySplit s;
    s.suffix = suffix;
    s.subsystem = subsystem;
    return s;
  };
  DeliverySplit render = split("", "drm");
  render.render_node = true;
  render.allow_multiple_allocations = true;  // the driver arbitrates between a render node's clients
  DeliverySplit display = split("-display", "drm");
  display.display_node = true;
  DeliverySplit i2c = split("-i2c-dev", "i2c-dev");
  DeliverySplit aux = split("-drm-dp-aux-dev", "drm_dp_aux_dev");
  DeliveryDecision decision;
  for (const auto& w : walk.nodes) {
    const DeviceNode& n = w.node;
    if (IsRenderNode(n)) {
      render.nodes.push_back(n);
    } else if (IsCardNode(n)) {
      display.nodes.push_back(n);
    } else if (n.subsystem == "i2c-dev") {
      i2c.nodes.push_back(n);
    } else if (n.subsystem == "drm_dp_aux_dev") {
      aux.nodes.push_back(n);
    } else if (n.subsystem == "graphics") {
      decision.notes.push_back(n.path + " (framebuffer) is delivered by nothing");
    } else {
      decision.notes.push_back(n.path + " (" + (n.subsystem.empty() ? "unknown" : n.subsystem) +
                               ") in a GPU subtree is delivered by nothing");
    }
  }
  for (DeliverySplit* split : {&render, &display, &i2c, &aux}) {
    if (split->nodes.empty()) continue;
    SortNodes(&split->nodes);
    decision.devices.push_back(std::move(*split));
  }
  return decision;
}

}  // namespace

bool NaturalPathLess(const std::string& a, const std::string& b) { return ::strverscmp(a.c_str(), b.c_str()) < 0; }

bool HasBoundDriver(const std::string& driver) { return !driver.empty(); }

bool IsPciBusStructure(const PciFunctionFacts& function) {
  return (function.class_code && function.class_code->rfind("06", 0) == 0) || function.driver == "pcieport";
}

bool IsUsbHub(const UsbInterfaceFacts& interface) {
  return (interface.interface_class && *interface.interface_class == "09") || interface.driver == "hub";
}

bool IsUsbRootHub(const UsbDeviceFacts& device) { return StartsWith(device.name, "usb"); }

std::string DeviceNameFor(const std::string& bus, const std::string& address) {
  std::string out = bus + "-";
  for (char c : address) {
    if (c == ':' || c == '.' || c == '_') {
      out += '-';
    } else if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

bool IsPublishableDeviceName(const std::string& base) { return apis::IsDnsLabel(base + "-drm-dp-aux-dev"); }

bool DeliversBlockNode(const std::vector<WalkedNode>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), [](const WalkedNode& w) { return w.node.type == 'b' || IsFlashNode(w); });
}

std::optional<std::string> StorageWithholdReason(StorageRoles roles, const std::vector<WalkedNode>& nodes,
                                                 const StorageFactsForUnit& facts) {
  // Flash memory (an SPI NOR chip's MTD nodes, the firmware's own flash) is storage whatever the roles say.
  auto flash = std::find_if(nodes.begin(), nodes.end(), IsFlashNode);
  if (flash != nodes.end()) {
    return "delivers flash memory " + flash->node.path + " (mtd): storage belongs to the machine";
  }
  auto first_block = std::find_if(nodes.begin(), nodes.end(), [](const WalkedNode& w) { return w.node.type == 'b'; });
  if (first_block == nodes.end()) return std::nullopt;
  if (roles == StorageRoles::kWithholdAll) {
    return "delivers block device " + first_block->node.path +
           ": storage belongs to the machine (--storage-roles=host reads roles)";
  }
  if (facts.host == nullptr) {
    return "delivers block device " + first_block->node.path + " and the host's storage roles are unreadable (" +
           facts.host_error + ")";
  }
  if (auto role = FindStorageRole(*facts.host, nodes, facts.holders)) return "storage role: " + *role;
  return std::nullopt;
}

std::optional<DeviceNode> UsbfsNode(const UsbDeviceFacts& device) {
  DeviceNode node;
  node.path = DevNameToPath(device.devname);
  node.subsystem = "usb";
  if (node.path.empty() || !ParseDevNumbers(device.dev.value_or(""), &node.major, &node.minor)) return std::nullopt;
  return node;
}

DeliveryDecision DecideDelivery(const std::string& driver, const WalkResult& walk) {
  DeliveryDecision decision;
  if (walk.nodes.empty()) {
    // The one device published without nodes of its own: a Bluetooth adapter (its usbfs node only).
    if (driver == "btusb" && walk.has_bluetooth) decision.devices.push_back(DeliverySplit{});
    return decision;
  }
  bool gpu = std::any_of(walk.nodes.begin(), walk.nodes.end(), [](const WalkedNode& w) { return w.node.subsystem == "drm"; });
  if (gpu) return DecideGpu(walk);

  // A jack's input node belongs to the sound card it sits in, when that card delivers ALSA's nodes: a card
  // with jacks only is no audio controller, and its nodes are input nodes.
  const bool alsa = std::any_of(walk.nodes.begin(), walk.nodes.end(),
                                [](const WalkedNode& w) { return w.node.subsystem == "sound"; });
  std::set<std::string> kinds;
  DeliverySplit whole;
  DeliverySplit bus;  // the I2C bus nodes of a controller whose clients deliver nodes too (LPSS)
  bus.suffix = "-i2c-dev";
  bus.subsystem = "i2c-dev";
  const bool mixed_with_bus = std::any_of(walk.nodes.begin(), walk.nodes.end(), [](const WalkedNode& w) {
    return w.node.subsystem != "i2c-dev";
  });
  for (const auto& w : walk.nodes) {
    if (w.node.subsystem == "i2c-dev" && mixed_with_bus) {
      bus.nodes.push_back(w.node);
      continue;
    }
    std::string kind = (alsa && w.inside_sound_card && w.node.subsystem == "input") ? "sound" : w.node.subsystem;
    kinds.insert(kind.empty() ? "?" : kind);
    whole.nodes.push_back(w.node);
  }
  SortNodes(&whole.nodes);
  if (kinds.size() == 1 && *kinds.begin() != "?") whole.subsystem = *kinds.begin();
  decision.devices.push_back(std::move(whole));
  if (!bus.nodes.empty()) {
    SortNodes(&bus.nodes);
    decision.devices.push_back(std::move(bus));
  }
  return decision;
}

std::string LeftOutReason(const std::string& driver, const std::optional<std::string>& pci_class,
                          const WalkResult& walk, const DeliveryDecision& decision) {
  if (!walk.nodes.empty()) {
    // Nodes, but none a claim delivers (a GPU subtree holding only a framebuffer).
    std::string nodes;
    for (const auto& w : walk.nodes) nodes += (nodes.empty() ? "" : ", ") + w.node.path;
    return "its only nodes (" + nodes + ") are delivered by nothing" +
           (decision.notes.empty() ? std::string() : ": " + decision.notes.front());
  }
  const std::string bound = "bound to " + driver + ", no device node in its sysfs subtree";
  if (driver == "nvidia") {
    return bound + ": its driver creates its nodes (/dev/nvidia*) outside sysfs; a vendor DRA driver serves it";
  }
  if (driver == "vfio-pci") return bound + ": held for passthrough, its /dev/vfio group node lies outside it";
  if (!walk.net_interfaces.empty()) {
    std::string names;
    for (const auto& n : walk.net_interfaces) names += (names.empty() ? "" : ", ") + n;
    return "network interface only (" + names + ")";
  }
  if (walk.has_bluetooth) return "Bluetooth radio on " + driver + ": only btusb's adapters are published";
  if (!walk.bus_clients.empty()) {
    std::string clients;
    for (const auto& c : walk.bus_clients) clients += (clients.empty() ? "" : ", ") + c;
    return bound + ": the devices on its I2C/SPI bus (" + clients +
           ") have no device node either (no client driver bound, or one that registers none)";
  }
  if (!walk.buses_below.empty()) {
    std::string buses;
    for (const auto& b : walk.buses_below) buses += (buses.empty() ? "" : ", ") + b;
    return "a bus controller: the devices on its bus (" + buses + ") are reported on their own";
  }
  if (pci_class && pci_class->rfind("03", 0) == 0) {
    return bound + ": a display controller whose driver registered no DRM device";
  }
  return bound;
}

std::optional<IdleUsbFinding> IdleUsbState(const UsbDeviceFacts& device) {
  if (IsUsbRootHub(device) || device.device_class == "09") return std::nullopt;  // bus structure
  const std::string where = "/sys/bus/usb/devices/" + device.name;
  if (device.authorized == "0") {
    return IdleUsbFinding{"not authorized",
                   "not authorized (authorized=0: a USB authorization policy blocks it, or its bus's "
                   "authorized_default is 0), so it has no interfaces and a claim would deliver nothing; to publish "
                   "it, authorize it: `echo 1 > " + where + "/authorized`, or an allow rule in the authorization "
                   "daemon (usbguard allow-device)"};
  }
  if (device.configuration_value.value_or("").empty()) {
    return IdleUsbFinding{"not configured",
                   "not configured (bConfigurationValue is empty: no configuration is active), so it has no "
                   "interfaces and a claim would deliver nothing; to publish it, configure it: `echo 1 > " + where +
                   "/bConfigurationValue`"};
  }
  return IdleUsbFinding{"no interfaces", "configuration " + *device.configuration_value +
                                      " is active but the device has no interfaces: a claim would deliver nothing"};
}

}  // namespace liken::discovery
