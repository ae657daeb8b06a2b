#include <sys/utsname.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
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
#include "discovery/unit_facts.h"

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

std::vector<const LeftOutDevice*> Inventory::IdleUsb() const {
  std::vector<const LeftOutDevice*> out;
  for (const auto& l : left_out) {
    if (!l.idle.empty()) out.push_back(&l);
  }
  return out;
}

namespace {

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
    auto function = ReadPciFunctionFacts(address, dir, devices_root_);
    if (!function.ok()) {
      Warn(dir, "unreadable PCI device (" + std::string(function.status().message()) + "); skipped");
      return;
    }
    if (IsPciBusStructure(*function)) return;
    if (!HasBoundDriver(function->driver)) {
      AddUnclaimed("pci", address, function->modalias);
      return;
    }
    std::string base = DeviceNameFor("pci", address);
    AttributeSet attrs = PciAttributes(base, *function, pci_ids_, &inventory_->warnings);
    PublishUnit(base, function->driver, dir, attrs, std::nullopt, {}, function->class_code);
  }

  void ScanUsbInterface(const std::string& interface_name, const std::string& dir) {
    auto interface = ReadUsbInterfaceFacts(interface_name, dir, devices_root_);
    if (!interface.ok()) {
      Warn(dir, "unreadable USB interface (" + std::string(interface.status().message()) + "); skipped");
      return;
    }
    if (IsUsbHub(*interface)) return;
    auto usb_device = ReadUsbDeviceFacts(DirName(dir), devices_root_);
    if (!usb_device.ok()) {
      Warn(dir, "USB interface without a readable parent device; skipped");
      return;
    }
    if (IsUsbRootHub(*usb_device)) return;
    if (!HasBoundDriver(interface->driver)) {
      AddUnclaimed("usb", usb_device->name, interface->modalias);
      return;
    }
    std::string base = DeviceNameFor("usb", interface_name);
    AttributeSet attrs = UsbAttributes(base, *interface, *usb_device, &inventory_->warnings);
    std::optional<DeviceNode> usbfs = UsbfsNode(*usb_device);
    if (!usbfs) Warn(base, "the USB device has no usable usbfs node (DEVNAME or dev missing)");
    size_t left_out = inventory_->left_out.size();
    PublishUnit(base, interface->driver, dir, attrs, usbfs, {interface_name}, std::nullopt);
    if (inventory_->left_out.size() > left_out) usb_left_out_.emplace_back(left_out, DirName(dir));
  }

  // A USB device (not an interface) none of whose interfaces the scan saw: an idle one is left out, with why.
  void ScanUsbDeviceWithoutInterfaces(const std::string& dir) {
    auto usb_device = ReadUsbDeviceFacts(dir, devices_root_);
    if (!usb_device.ok()) {
      Warn(dir, "unreadable USB device (" + std::string(usb_device.status().message()) + "); skipped");
      return;
    }
    auto idle = IdleUsbState(*usb_device);
    if (!idle) return;
    std::string name = DeviceNameFor("usb", usb_device->name);
    inventory_->left_out.push_back({name, usb_device->driver, std::move(idle->reason), std::move(idle->state)});
  }

  // After every unit: a left-out USB interface whose USB device another interface publishes says so.
  void Finish() {
    for (const auto& [index, device_dir] : usb_left_out_) {
      LeftOutDevice& left = inventory_->left_out[index];
      const PublishedDevice* sibling = nullptr;  // preferably one on the same driver (a card's streaming interface)
      for (const auto& p : inventory_->published) {
        if (p.usb_interfaces.empty() || DirName(p.sysfs_path) != device_dir) continue;
        auto driver = p.attributes.find(kAttrDriver);
        const bool same_driver = driver != p.attributes.end() && driver->second == AttributeValue(left.driver);
        if (sibling == nullptr || same_driver) sibling = &p;
        if (same_driver) break;
      }
      if (sibling != nullptr) left.reason = "part of a USB device another interface publishes (" + sibling->name + ")";
    }
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
                   std::vector<std::string> usb_interfaces, const std::optional<std::string>& pci_class) {
    if (!IsPublishableDeviceName(base)) {
      Warn(dir, "device name '" + base + "' is not a valid DNS label of at most 48 characters; skipped");
      return;
    }
    WalkResult walk = WalkDelivery(dir);
    for (auto& w : walk.warnings) inventory_->warnings.push_back({base, w.device + ": " + w.message});
    if (DeliversBlockNode(walk.nodes)) {
      StorageFactsForUnit storage;
      if (options_.storage_roles == StorageRoles::kHost) {
        storage.host = StorageFacts(&storage.host_error);
        if (storage.host != nullptr) storage.holders = ReadBlockHolders(walk.nodes);
      }
      if (auto reason = StorageWithholdReason(options_.storage_roles, walk.nodes, storage)) {
        inventory_->withheld.push_back({base, *std::move(reason)});
        return;
      }
    }
    DeliveryDecision decision = DecideDelivery(driver, walk);
    if (driver == kKfdDriver) AddAmdComputeNode(driver, Kfd(), &decision);
    for (auto& note : decision.notes) inventory_->warnings.push_back({base, note});
    if (decision.devices.empty()) {
      inventory_->left_out.push_back({base, driver, LeftOutReason(driver, pci_class, walk, decision), ""});
      return;
    }
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
  std::vector<std::pair<size_t, std::string>> usb_left_out_;  // left_out index, the USB device's directory
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
    auto usb = pass.BusDevices("usb");
    std::set<std::string> with_interfaces;  // USB devices ("1-2") with an interface ("1-2:1.0") listed
    for (const auto& [name, dir] : usb) {
      if (name.find(':') == std::string::npos) continue;
      with_interfaces.insert(name.substr(0, name.find(':')));
      pass.ScanUsbInterface(name, dir);
    }
    for (const auto& [name, dir] : usb) {
      if (name.find(':') == std::string::npos && !with_interfaces.contains(name)) pass.ScanUsbDeviceWithoutInterfaces(dir);
    }
    pass.Finish();
    if (options_.match_modules && !inventory.unclaimed.empty()) MatchModules(&inventory);
    std::sort(inventory.published.begin(), inventory.published.end(),
              [](const PublishedDevice& a, const PublishedDevice& b) { return a.name < b.name; });
    std::sort(inventory.unclaimed.begin(), inventory.unclaimed.end(), [](const UnclaimedDevice& a, const UnclaimedDevice& b) {
      return std::tie(a.bus, a.address, a.modalias) < std::tie(b.bus, b.address, b.modalias);
    });
    std::sort(inventory.left_out.begin(), inventory.left_out.end(),
              [](const LeftOutDevice& a, const LeftOutDevice& b) { return a.name < b.name; });
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
