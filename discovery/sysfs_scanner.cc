#include <sys/utsname.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "apis/resource_slice.h"
#include "common/files.h"
#include "discovery/amd_compute.h"
#include "discovery/attributes.h"
#include "discovery/delivery_walk.h"
#include "discovery/device_rules.h"
#include "discovery/modules_alias.h"
#include "discovery/pci_ids.h"
#include "discovery/scanner.h"
#include "discovery/storage_roles.h"
#include "discovery/sysfs_device.h"

namespace liken::discovery {

const PublishedDevice* Inventory::Find(const std::string& name) const {
  auto it = std::lower_bound(published.begin(), published.end(), name,
                             [](const PublishedDevice& d, const std::string& n) { return d.name < n; });
  if (it != published.end() && it->name == name) return &*it;
  for (const auto& d : published) {
    if (d.name == name) return &d;  // unsorted inventories (tests) still work
  }
  return nullptr;
}

namespace {

// A device name from a bus address: "pci-" + "0000:00:02.0" → "pci-0000-00-02-0".
std::string DeviceNameFor(const std::string& bus, const std::string& address) {
  std::string out = bus + "-";
  for (char c : address) {
    if (c == ':' || c == '.' || c == '_') out += '-';
    else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else out += c;
  }
  return out;
}

std::optional<int64_t> ParseNumaNode(const std::optional<std::string>& raw) {
  if (!raw) return std::nullopt;
  try {
    size_t used = 0;
    long v = std::stol(*raw, &used);
    if (used != raw->size() || v < 0 || v > 4096) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// A 16-bit ID as the attribute's text ("8086") and its number.
struct HexId {
  std::string text;
  uint16_t value;
};

std::optional<HexId> ReadHexId(const SysfsDevice& device, const char* file) {
  auto hex = NormalizeHex(device.Attribute(file).value_or(""), 4);
  if (!hex) return std::nullopt;
  return HexId{*hex, static_cast<uint16_t>(std::stoul(*hex, nullptr, 16))};
}

// The state of one Scan() call.
class ScanPass {
 public:
  ScanPass(const ScanOptions& options, const PciIdsDatabase* pci_ids, Inventory* inventory)
      : options_(options), pci_ids_(pci_ids), inventory_(inventory), devices_root_(options.sysfs_root + "/devices") {}

  // Bus device name → resolved directory under <sysfs>/devices, for one bus.
  std::vector<std::pair<std::string, std::string>> BusDevices(const std::string& bus) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string dir = options_.sysfs_root + "/bus/" + bus + "/devices";
    auto names = ListDirectory(dir);
    if (!names.ok()) {
      if (!absl::IsNotFound(names.status())) Warn(dir, std::string(names.status().message()));
      return out;
    }
    for (const auto& name : *names) {
      std::string entry = dir + "/" + name;
      if (!IsCleanUtf8(name)) {
        Warn(dir, "an entry whose name is not valid UTF-8 text; skipped");
        continue;
      }
      auto target = ReadLink(entry);
      std::string resolved = target.ok() ? ResolveRelative(dir, *target) : entry;
      if (target.ok() && resolved.rfind(devices_root_ + "/", 0) != 0) {
        Warn(entry, "link points outside " + devices_root_ + "; skipped");
        continue;
      }
      out.emplace_back(name, resolved);
    }
    return out;
  }

  void ScanPciFunction(const std::string& address, const std::string& dir) {
    auto device = ReadSysfsDevice(dir);
    if (!device.ok()) {
      Warn(dir, "unreadable PCI device (" + std::string(device.status().message()) + "); skipped");
      return;
    }
    auto class_code = NormalizeHex(device->Attribute("class").value_or(""), 6);
    uint8_t class_byte = class_code ? static_cast<uint8_t>(std::stoul(class_code->substr(0, 2), nullptr, 16)) : 0xff;
    if (class_byte == 0x06 || device->driver == "pcieport") return;  // bus structure: bridges and ports
    std::string modalias = device->Attribute("modalias").value_or(device->Property("MODALIAS"));
    if (device->driver.empty()) {
      AddUnclaimed("pci", address, modalias);
      return;
    }
    std::string base = DeviceNameFor("pci", address);
    AttributeSet attrs(base, &inventory_->warnings);
    attrs.AddString(kAttrBus, "pci");
    attrs.AddString(kAttrAddress, address);
    attrs.AddString(kAttrDriver, device->driver);
    if (class_code) {
      attrs.AddString(kAttrClassCode, *class_code);
      attrs.AddString(kAttrClass, PciClassWord(class_byte));
    } else {
      Warn(base, "class left out: unreadable or not hex");
    }
    auto vendor = ReadHexId(*device, "vendor");
    auto product = ReadHexId(*device, "device");
    if (vendor) attrs.AddString(kAttrVendor, vendor->text);
    if (product) attrs.AddString(kAttrProduct, product->text);
    if (vendor && product && pci_ids_ != nullptr) attrs.AddName(pci_ids_->DeviceName(vendor->value, product->value));
    attrs.AddString(kAttrModalias, modalias);
    attrs.AddString(kAttrPcieRoot, PcieRoot(dir));
    attrs.AddString(kAttrPciBusId, address);
    if (auto numa = ParseNumaNode(device->Attribute("numa_node"))) attrs.AddInt(kAttrNumaNode, *numa);
    PublishUnit(base, device->driver, dir, attrs, std::nullopt, {});
  }

  void ScanUsbInterface(const std::string& interface_name, const std::string& dir) {
    auto device = ReadSysfsDevice(dir);
    if (!device.ok()) {
      Warn(dir, "unreadable USB interface (" + std::string(device.status().message()) + "); skipped");
      return;
    }
    auto iclass = NormalizeHex(device->Attribute("bInterfaceClass").value_or(""), 2);
    if ((iclass && *iclass == "09") || device->driver == "hub") return;  // hubs are bus structure
    std::string parent_dir = DirName(dir);
    auto parent = ReadSysfsDevice(parent_dir);
    if (!parent.ok()) {
      Warn(dir, "USB interface without a readable parent device; skipped");
      return;
    }
    std::string port = parent->name;
    if (port.rfind("usb", 0) == 0) return;  // a root hub: the USB core's own device
    std::string modalias = device->Attribute("modalias").value_or(device->Property("MODALIAS"));
    if (device->driver.empty()) {
      AddUnclaimed("usb", port, modalias);
      return;
    }
    std::string base = DeviceNameFor("usb", interface_name);
    AttributeSet attrs(base, &inventory_->warnings);
    attrs.AddString(kAttrBus, "usb");
    attrs.AddString(kAttrAddress, port);
    attrs.AddString(kAttrDriver, device->driver);
    if (iclass) {
      attrs.AddString(kAttrClassCode, *iclass);
      attrs.AddString(kAttrClass, UsbClassWord(static_cast<uint8_t>(std::stoul(*iclass, nullptr, 16))));
    }
    attrs.AddName(parent->Attribute("product"));
    attrs.AddString(kAttrModalias, modalias);
    attrs.AddString(kAttrSerial, parent->Attribute("serial"));
    attrs.AddString(kAttrVendor, NormalizeHex(parent->Attribute("idVendor").value_or(""), 4));
    attrs.AddString(kAttrProduct, NormalizeHex(parent->Attribute("idProduct").value_or(""), 4));
    attrs.AddString(kAttrPcieRoot, PcieRoot(dir));
    if (auto numa = NearestNumaNode(parent_dir)) attrs.AddInt(kAttrNumaNode, *numa);

    std::optional<DeviceNode> usbfs;
    DeviceNode node;
    node.path = DevNameToPath(parent->Property("DEVNAME"));
    node.subsystem = "usb";
    if (!node.path.empty() && ParseDevNumbers(parent->Attribute("dev").value_or(""), &node.major, &node.minor)) {
      usbfs = node;
    } else {
      Warn(base, "the USB device has no usable usbfs node (DEVNAME or dev missing)");
    }
    PublishUnit(base, device->driver, dir, attrs, usbfs, {interface_name});
  }

 private:
  void Warn(const std::string& device, std::string message) {
    inventory_->warnings.push_back({device, std::move(message)});
  }

  void AddUnclaimed(const std::string& bus, const std::string& address, const std::string& modalias) {
    if (!IsCleanUtf8(modalias)) {
      Warn(address, "modalias left out: not valid UTF-8 text");
      inventory_->unclaimed.push_back({bus, address, "", {}});
      return;
    }
    inventory_->unclaimed.push_back({bus, address, modalias, {}});
  }

  // "pci0000:00" for a device under a PCI root complex, else nullopt.
  std::optional<std::string> PcieRoot(const std::string& dir) const {
    if (dir.rfind(devices_root_ + "/", 0) != 0) return std::nullopt;
    std::string rest = dir.substr(devices_root_.size() + 1);
    std::string top = rest.substr(0, rest.find('/'));
    if (top.rfind("pci", 0) != 0) return std::nullopt;
    return top;
  }

  // The numa_node of the closest ancestor (a USB device's host controller) that has one of 0 or more.
  std::optional<int64_t> NearestNumaNode(std::string dir) const {
    while (dir.size() > devices_root_.size() && dir.rfind(devices_root_, 0) == 0) {
      auto raw = ReadAttribute(dir + "/numa_node");
      if (raw.ok()) return ParseNumaNode(*raw);
      dir = DirName(dir);
    }
    return std::nullopt;
  }

  // /dev/kfd, read once per scan and only when an amdgpu device asks (see amd_compute.h).
  const std::optional<DeviceNode>& Kfd() {
    if (!kfd_read_) {
      kfd_read_ = true;
      kfd_ = ReadKfdNode(options_.sysfs_root, &inventory_->warnings);
    }
    return kfd_;
  }

  const HostStorageFacts* StorageFacts(std::string* error) {
    if (!storage_loaded_) {
      storage_loaded_ = true;
      auto facts = ReadHostStorageFacts(options_.proc_root, options_.dev_root);
      if (facts.ok()) {
        storage_facts_ = std::move(*facts);
      } else {
        storage_error_ = std::string(facts.status().message());
      }
    }
    *error = storage_error_;
    return storage_facts_ ? &*storage_facts_ : nullptr;
  }

  void PublishUnit(const std::string& base, const std::string& driver, const std::string& dir,
                   const AttributeSet& attrs, const std::optional<DeviceNode>& usbfs,
                   std::vector<std::string> usb_interfaces) {
    if (!apis::IsDnsLabel(base + "-drm-dp-aux-dev")) {  // the longest suffix must fit too
      Warn(dir, "device name '" + base + "' is not a valid DNS label of at most 48 characters; skipped");
      return;
    }
    WalkResult walk = WalkDelivery(dir);
    for (auto& w : walk.warnings) inventory_->warnings.push_back({base, w.device + ": " + w.message});
    auto first_block = std::find_if(walk.nodes.begin(), walk.nodes.end(), [](const WalkedNode& w) { return w.node.type == 'b'; });
    if (first_block != walk.nodes.end()) {
      if (options_.storage_roles == StorageRoles::kWithholdAll) {
        inventory_->withheld.push_back({base, "delivers block device " + first_block->node.path +
                                                  ": storage belongs to the machine (--storage-roles=host reads roles)"});
        return;
      }
      std::string error;
      const HostStorageFacts* facts = StorageFacts(&error);
      if (facts == nullptr) {
        inventory_->withheld.push_back({base, "delivers block device " + first_block->node.path +
                                                  " and the host's storage roles are unreadable (" + error + ")"});
        return;
      }
      if (auto role = FindStorageRole(*facts, walk.nodes)) {
        inventory_->withheld.push_back({base, "storage role: " + *role});
        return;
      }
    }
    DeliveryDecision decision = DecideDelivery(driver, walk);
    if (driver == kKfdDriver) AddAmdComputeNode(driver, Kfd(), &decision);
    for (auto& note : decision.notes) inventory_->warnings.push_back({base, note});
    for (auto& split : decision.devices) {
      PublishedDevice device;
      device.name = base + split.suffix;
      device.attributes = attrs.values();
      if (split.subsystem) device.attributes[kAttrSubsystem] = *split.subsystem;
      device.attributes[kAttrRenderNode] = split.render_node;
      device.attributes[kAttrDisplayNode] = split.display_node;
      device.nodes = std::move(split.nodes);
      if (usbfs) device.nodes.push_back(*usbfs);
      device.allow_multiple_allocations = split.allow_multiple_allocations;
      device.sysfs_path = dir;
      device.usb_interfaces = usb_interfaces;
      inventory_->published.push_back(std::move(device));
    }
  }

  const ScanOptions& options_;
  const PciIdsDatabase* pci_ids_;
  Inventory* inventory_;
  std::string devices_root_;
  bool kfd_read_ = false;
  std::optional<DeviceNode> kfd_;
  bool storage_loaded_ = false;
  std::optional<HostStorageFacts> storage_facts_;
  std::string storage_error_;
};

class SysfsScanner : public Scanner {
 public:
  explicit SysfsScanner(ScanOptions options) : options_(std::move(options)) {}

  absl::StatusOr<Inventory> Scan() override {
    auto top = ListDirectory(options_.sysfs_root + "/devices");
    if (!top.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read sysfs at ", options_.sysfs_root, ": ", top.status().message()));
    }
    Inventory inventory;
    const PciIdsDatabase* pci_ids = PciIds(&inventory);
    ScanPass pass(options_, pci_ids, &inventory);
    for (const auto& [address, dir] : pass.BusDevices("pci")) pass.ScanPciFunction(address, dir);
    for (const auto& [name, dir] : pass.BusDevices("usb")) {
      if (name.find(':') != std::string::npos) pass.ScanUsbInterface(name, dir);
    }
    if (options_.match_modules && !inventory.unclaimed.empty()) MatchModules(&inventory);
    std::sort(inventory.published.begin(), inventory.published.end(),
              [](const PublishedDevice& a, const PublishedDevice& b) { return a.name < b.name; });
    std::sort(inventory.unclaimed.begin(), inventory.unclaimed.end(), [](const UnclaimedDevice& a, const UnclaimedDevice& b) {
      return std::tie(a.bus, a.address, a.modalias) < std::tie(b.bus, b.address, b.modalias);
    });
    std::sort(inventory.withheld.begin(), inventory.withheld.end(),
              [](const WithheldDevice& a, const WithheldDevice& b) { return a.name < b.name; });
    return inventory;
  }

 private:
  const PciIdsDatabase* PciIds(Inventory* inventory) {
    std::call_once(pci_ids_once_, [this] {
      auto db = PciIdsDatabase::Load(options_.pci_ids_path);
      if (db.ok()) {
        pci_ids_ = std::make_unique<PciIdsDatabase>(std::move(*db));
      } else {
        pci_ids_error_ = std::string(db.status().message());
      }
    });
    if (!pci_ids_) inventory->warnings.push_back({"pci.ids", "PCI names left out: " + pci_ids_error_});
    return pci_ids_.get();
  }

  void MatchModules(Inventory* inventory) {
    std::call_once(aliases_once_, [this] {
      std::string release = options_.kernel_release;
      if (release.empty()) {
        struct utsname u;
        if (::uname(&u) == 0) release = u.release;
      }
      auto db = ModulesAlias::Load(options_.modules_root + "/" + release);
      if (db.ok()) {
        aliases_ = std::make_unique<ModulesAlias>(std::move(*db));
      } else {
        aliases_error_ = std::string(db.status().message());
      }
    });
    if (!aliases_) {
      inventory->warnings.push_back({"modules.alias", "modules for unclaimed hardware unknown: " + aliases_error_});
      return;
    }
    for (auto& u : inventory->unclaimed) u.modules = aliases_->Match(u.modalias);
  }

  const ScanOptions options_;
  std::once_flag pci_ids_once_;
  std::unique_ptr<PciIdsDatabase> pci_ids_;
  std::string pci_ids_error_;
  std::once_flag aliases_once_;
  std::unique_ptr<ModulesAlias> aliases_;
  std::string aliases_error_;
};

}  // namespace

std::unique_ptr<Scanner> NewSysfsScanner(const ScanOptions& options) {
  return std::make_unique<SysfsScanner>(options);
}

}  // namespace liken::discovery
