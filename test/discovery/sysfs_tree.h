// A plain-directory sysfs/dev tree for tests: devices, attributes, links and nodes laid out like the kernel's.
#pragma once

#include <map>
#include <string>

namespace liken::testing {

// Builds a fake sysfs under a fresh temporary directory and removes it on destruction. Not thread-safe.
class SysfsTree {
 public:
  SysfsTree();
  ~SysfsTree();
  SysfsTree(const SysfsTree&) = delete;
  SysfsTree& operator=(const SysfsTree&) = delete;

  // The temporary root; the sysfs tree is <root>/sys, the /dev tree <root>/dev, /proc <root>/proc.
  const std::string& root() const { return root_; }
  std::string sysfs() const { return root_ + "/sys"; }
  std::string dev() const { return root_ + "/dev"; }
  std::string proc() const { return root_ + "/proc"; }

  // Adds a bus device at `devpath` ("/devices/pci0000:00/0000:00:02.0") on `bus` ("pci", "usb"), linked from
  // /sys/bus/<bus>/devices, with `driver` bound when not empty, `attrs` as attribute files and `uevent`
  // properties (SUBSYSTEM and DRIVER are added).
  void BusDevice(const std::string& devpath, const std::string& bus, const std::string& driver,
                 const std::map<std::string, std::string>& attrs = {},
                 const std::map<std::string, std::string>& uevent = {});

  // Adds a class device (no bus), optionally a node: `devname` relative to /dev and `dev` "MAJ:MIN".
  void ClassDevice(const std::string& devpath, const std::string& klass, const std::string& devname = "",
                   const std::string& dev = "", const std::map<std::string, std::string>& uevent = {});

  // Adds a node-bearing device on a bus that is not PCI or USB (hid, usb-serial, scsi, i2c adapter).
  void OtherBusDevice(const std::string& devpath, const std::string& bus,
                      const std::map<std::string, std::string>& uevent = {});

  // Writes `content` to <root>/<path>, creating parent directories.
  void File(const std::string& path, const std::string& content);
  // Creates a symlink at <root>/<path> pointing to `target` (verbatim).
  void Link(const std::string& path, const std::string& target);
  // Creates a directory <root>/<path> and its parents.
  void Dir(const std::string& path);

 private:
  std::string root_;
};

}  // namespace liken::testing
