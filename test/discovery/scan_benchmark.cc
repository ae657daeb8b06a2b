// Scan speed: a generated plain-directory tree of 2,000 PCI and USB devices, scanned by the real scanner,
// against a floor measured in the same run (a bare walk that opens the same directories and reads the same
// files and does nothing else). Optionally also a umockdev recording, loaded as a plain tree (no preload).
//
//   scan_benchmark [--devices N] [--rounds R] [--recording FILE.umockdev]
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "discovery/scanner.h"
#include "test/discovery/machine_parts.h"
#include "test/discovery/sysfs_tree.h"

#ifdef LIKEN_HAVE_UMOCKDEV
#include <umockdev.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using liken::testing::SysfsTree;

// Builds `count` devices: half PCI functions (a GPU-like subtree each), half USB serial interfaces.
void BuildTree(SysfsTree& t, int count) {
  liken::testing::AddXhciWithRootHub(t, 1);
  int pci = count / 2, usb = count - pci;
  for (int i = 0; i < pci; ++i) {
    char addr[64];
    std::snprintf(addr, sizeof addr, "/devices/pci0000:%02x/0000:%02x:%02x.%d", i / 256, i / 256 + 1, (i / 8) % 32, i % 8);
    std::string dev = addr;
    liken::testing::AddPci(t, dev, "snd_hda_intel", "8086", "9d71", "0x040300", "0");
    t.ClassDevice(dev + "/sound/card" + std::to_string(i), "sound");
    t.ClassDevice(dev + "/sound/card" + std::to_string(i) + "/controlC" + std::to_string(i), "sound",
                  "snd/controlC" + std::to_string(i), "116:" + std::to_string(i % 1000));
  }
  for (int i = 0; i < usb; ++i) {
    int bus = 1;
    std::string port = "1-" + std::to_string(i + 1);
    std::string d = liken::testing::AddUsbDevice(t, "/devices/pci0000:00/0000:00:14.0/usb1", port, bus, (i % 126) + 2,
                                                 "10c4", "ea60", {{"product", "CP2102 USB to UART Bridge Controller"},
                                                                  {"serial", "SER" + std::to_string(i)}});
    std::string itf = liken::testing::AddUsbInterface(t, d, 0, "ff", "cp210x");
    t.OtherBusDevice(itf + "/ttyUSB" + std::to_string(i), "usb-serial");
    t.ClassDevice(itf + "/ttyUSB" + std::to_string(i) + "/tty/ttyUSB" + std::to_string(i), "tty",
                  "ttyUSB" + std::to_string(i), "188:" + std::to_string(i));
  }
}

size_t ReadWhole(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  size_t total = 0;
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) total += static_cast<size_t>(n);
  ::close(fd);
  return total;
}

std::string LinkBase(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string s(buf, static_cast<size_t>(n));
  return s.substr(s.find_last_of('/') + 1);
}

// The floor: the same directories opened and the same files read, nothing decided.
size_t FloorWalk(const std::string& dir, int depth) {
  size_t bytes = 0;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  std::vector<std::string> subdirs;
  bool has_dev = false;
  while (auto* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (e->d_type == DT_DIR && n != "power" && n != "msi_irqs") subdirs.push_back(n);
    if (e->d_type == DT_REG && n == "dev") has_dev = true;
  }
  ::closedir(d);
  if (depth > 0 && has_dev) bytes += ReadWhole(dir + "/uevent") + ReadWhole(dir + "/dev");
  if (depth > 0) LinkBase(dir + "/subsystem");
  for (const auto& s : subdirs) {
    std::string sub = LinkBase(dir + "/" + s + "/subsystem");
    if (sub == "pci" || sub == "usb") continue;
    bytes += FloorWalk(dir + "/" + s, depth + 1);
  }
  return bytes;
}

size_t Floor(const std::string& sysfs) {
  size_t bytes = 0;
  static const char* const kPciFiles[] = {"uevent", "class", "modalias", "vendor", "device", "numa_node"};
  static const char* const kUsbFiles[] = {"uevent", "bInterfaceClass", "modalias"};
  static const char* const kUsbParentFiles[] = {"uevent", "product", "serial", "idVendor", "idProduct", "dev"};
  for (const char* bus : {"pci", "usb"}) {
    std::string dir = sysfs + "/bus/" + bus + "/devices";
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    std::vector<std::string> names;
    while (auto* e = ::readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      char buf[4096];
      ssize_t len = ::readlink((dir + "/" + n).c_str(), buf, sizeof buf - 1);
      if (len <= 0) continue;
      std::string target = dir + "/" + std::string(buf, static_cast<size_t>(len));
      LinkBase(target + "/subsystem");
      LinkBase(target + "/driver");
      if (std::strcmp(bus, "pci") == 0) {
        for (const char* f : kPciFiles) bytes += ReadWhole(target + "/" + f);
      } else {
        if (n.find(':') == std::string::npos) continue;
        for (const char* f : kUsbFiles) bytes += ReadWhole(target + "/" + f);
        std::string parent = target.substr(0, target.find_last_of('/'));
        for (const char* f : kUsbParentFiles) bytes += ReadWhole(parent + "/" + f);
        LinkBase(parent + "/subsystem");
        LinkBase(parent + "/driver");
      }
      bytes += FloorWalk(target, 0);
    }
  }
  return bytes;
}

template <typename F>
double BestMicros(int rounds, F&& f) {
  double best = 1e18;
  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    f();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    best = std::min(best, us);
  }
  return best;
}

void Measure(const char* label, const std::string& sysfs, const std::string& dev, int rounds) {
  liken::discovery::ScanOptions options;
  options.sysfs_root = sysfs;
  options.dev_root = dev;
  auto scanner = liken::discovery::NewSysfsScanner(options);
  auto warm = scanner->Scan();  // loads pci.ids once, warms the page cache
  if (!warm.ok()) {
    std::fprintf(stderr, "%s: scan failed: %s\n", label, std::string(warm.status().message()).c_str());
    return;
  }
  size_t devices = 0;
  {
    // Count PCI functions and USB interfaces, the units the scanner judges.
    for (const char* bus : {"pci", "usb"}) {
      DIR* d = ::opendir((sysfs + "/bus/" + bus + "/devices").c_str());
      if (!d) continue;
      while (auto* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n[0] == '.') continue;
        if (std::strcmp(bus, "pci") == 0 || n.find(':') != std::string::npos) ++devices;
      }
      ::closedir(d);
    }
  }
  Floor(sysfs);
  double floor_us = BestMicros(rounds, [&] { Floor(sysfs); });
  double scan_us = BestMicros(rounds, [&] { (void)scanner->Scan(); });
  std::printf("%-22s units=%-5zu published=%-5zu floor=%9.1f us  scan=%9.1f us  per-unit=%6.2f us  ratio=%.2fx\n",
              label, devices, warm->published.size(), floor_us, scan_us, devices ? scan_us / devices : 0.0,
              scan_us / std::max(floor_us, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // as the product binary runs
  int count = 2000, rounds = 15;
  std::vector<std::string> recordings;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--devices") count = std::atoi(argv[i + 1]);
    else if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (flag == "--recording") recordings.push_back(argv[i + 1]);
  }
  {
    SysfsTree tree;
    BuildTree(tree, count);
    Measure("generated tree", tree.sysfs(), tree.dev(), rounds);
  }
#ifdef LIKEN_HAVE_UMOCKDEV
  for (const auto& rec : recordings) {
    UMockdevTestbed* tb = umockdev_testbed_new();
    GError* error = nullptr;
    if (!umockdev_testbed_add_from_file(tb, rec.c_str(), &error)) {
      std::fprintf(stderr, "cannot load %s: %s\n", rec.c_str(), error ? error->message : "?");
      return 1;
    }
    gchar* sys = umockdev_testbed_get_sys_dir(tb);
    gchar* root = umockdev_testbed_get_root_dir(tb);
    std::string label = rec.substr(rec.find_last_of('/') + 1);
    Measure(label.c_str(), sys, std::string(root) + "/dev", rounds * 4);
    g_free(sys);
    g_free(root);
    g_object_unref(tb);
  }
#endif
  return 0;
}
