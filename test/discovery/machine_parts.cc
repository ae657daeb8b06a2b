#include "test/discovery/machine_parts.h"

#include <cctype>
#include <cstdio>

namespace liken::testing {

std::map<std::string, std::string> PciAttrs(const std::string& vendor, const std::string& device,
                                            const std::string& class_code, const std::string& numa) {
  std::string cls = class_code.substr(2);
  auto upper = [](std::string v) {
    for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return v;
  };
  return {{"vendor", "0x" + vendor},
          {"device", "0x" + device},
          {"class", class_code},
          {"numa_node", numa},
          {"modalias", "pci:v0000" + upper(vendor) + "d0000" + upper(device) + "sv00001234sd00005678bc" +
                           upper(cls.substr(0, 2)) + "sc" + upper(cls.substr(2, 2)) + "i" + upper(cls.substr(4, 2))}};
}

void AddPci(SysfsTree& t, const std::string& devpath, const std::string& driver, const std::string& vendor,
            const std::string& device, const std::string& class_code, const std::string& numa) {
  t.BusDevice(devpath, "pci", driver, PciAttrs(vendor, device, class_code, numa),
              {{"PCI_SLOT_NAME", devpath.substr(devpath.find_last_of('/') + 1)}});
}

void AddXhciWithRootHub(SysfsTree& t, int bus) {
  AddPci(t, "/devices/pci0000:00/0000:00:14.0", "xhci_hcd", "8086", "9d2f", "0x0c0330", "0");
  std::string hub = "/devices/pci0000:00/0000:00:14.0/usb" + std::to_string(bus);
  char devname[32];
  std::snprintf(devname, sizeof devname, "bus/usb/%03d/001", bus);
  t.BusDevice(hub, "usb", "usb", {{"busnum", std::to_string(bus)}, {"devnum", "1"}, {"bDeviceClass", "09"},
                                   {"idVendor", "1d6b"}, {"idProduct", "0002"}, {"dev", "189:" + std::to_string((bus - 1) * 128)}},
              {{"DEVTYPE", "usb_device"}, {"DEVNAME", devname}});
  t.BusDevice(hub + "/" + std::to_string(bus) + "-0:1.0", "usb", "hub",
              {{"bInterfaceClass", "09"}, {"bInterfaceNumber", "00"}}, {{"DEVTYPE", "usb_interface"}});
}

std::string AddUsbDevice(SysfsTree& t, const std::string& parent_devpath, const std::string& port, int bus, int devnum,
                         const std::string& vendor, const std::string& product,
                         const std::map<std::string, std::string>& strings) {
  std::string devpath = parent_devpath + "/" + port;
  char devname[32];
  std::snprintf(devname, sizeof devname, "bus/usb/%03d/%03d", bus, devnum);
  std::map<std::string, std::string> attrs = {{"busnum", std::to_string(bus)},
                                              {"devnum", std::to_string(devnum)},
                                              {"idVendor", vendor},
                                              {"idProduct", product},
                                              {"bDeviceClass", "00"},
                                              {"bConfigurationValue", "1"},
                                              {"authorized", "1"},
                                              {"dev", "189:" + std::to_string((bus - 1) * 128 + devnum - 1)}};
  for (const auto& [k, v] : strings) attrs[k] = v;
  t.BusDevice(devpath, "usb", "usb", attrs, {{"DEVTYPE", "usb_device"}, {"DEVNAME", devname}});
  return devpath;
}

std::string AddUsbInterface(SysfsTree& t, const std::string& device_devpath, int n, const std::string& iclass,
                            const std::string& driver) {
  std::string port = device_devpath.substr(device_devpath.find_last_of('/') + 1);
  std::string devpath = device_devpath + "/" + port + ":1." + std::to_string(n);
  char in[8];
  std::snprintf(in, sizeof in, "%02d", n);
  t.BusDevice(devpath, "usb", driver,
              {{"bInterfaceClass", iclass},
               {"bInterfaceNumber", in},
               {"modalias", "usb:v1234p5678d0100dc00dsc00dp00ic" + iclass + "isc00ip00in" + in}},
              {{"DEVTYPE", "usb_interface"}});
  return devpath;
}

}  // namespace liken::testing
