#include "test/discovery/sysfs_tree.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace liken::testing {
namespace {

void MakeDirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (!partial.empty()) ::mkdir(partial.c_str(), 0755);
  }
}

std::string Parent(const std::string& p) { return p.substr(0, p.find_last_of('/')); }
std::string Base(const std::string& p) { return p.substr(p.find_last_of('/') + 1); }

// "../" repeated once per directory level of `devpath` below /sys, to reach /sys from it.
std::string UpToSysfs(const std::string& devpath) {
  std::string up;
  for (char c : devpath) {
    if (c == '/') up += "../";
  }
  return up;
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

}  // namespace

SysfsTree::SysfsTree() {
  char tmpl[] = "/tmp/liken-sysfs-XXXXXX";
  char* dir = ::mkdtemp(tmpl);
  if (dir == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = dir;
  Dir("sys/devices");
  Dir("dev");
  Dir("proc/1");
}

SysfsTree::~SysfsTree() { ::nftw(root_.c_str(), RemoveEntry, 64, FTW_DEPTH | FTW_PHYS); }

void SysfsTree::Dir(const std::string& path) { MakeDirs(root_ + "/" + path); }

void SysfsTree::File(const std::string& path, const std::string& content) {
  std::string full = root_ + "/" + path;
  MakeDirs(Parent(full));
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out << content;
}

void SysfsTree::Link(const std::string& path, const std::string& target) {
  std::string full = root_ + "/" + path;
  MakeDirs(Parent(full));
  ::unlink(full.c_str());
  if (::symlink(target.c_str(), full.c_str()) != 0) throw std::runtime_error("symlink failed: " + full);
}

void SysfsTree::BusDevice(const std::string& devpath, const std::string& bus, const std::string& driver,
                          const std::map<std::string, std::string>& attrs,
                          const std::map<std::string, std::string>& uevent) {
  std::string dir = "sys" + devpath;
  std::string up = UpToSysfs(devpath);
  Dir(dir);
  std::string text = "SUBSYSTEM=" + bus + "\n";
  if (!driver.empty()) text += "DRIVER=" + driver + "\n";
  for (const auto& [k, v] : uevent) text += k + "=" + v + "\n";
  File(dir + "/uevent", text);
  for (const auto& [k, v] : attrs) File(dir + "/" + k, v + "\n");
  Link(dir + "/subsystem", up + "bus/" + bus);
  if (!driver.empty()) {
    Dir("sys/bus/" + bus + "/drivers/" + driver);
    Link(dir + "/driver", up + "bus/" + bus + "/drivers/" + driver);
  }
  Link("sys/bus/" + bus + "/devices/" + Base(devpath), "../../.." + devpath);
}

void SysfsTree::ClassDevice(const std::string& devpath, const std::string& klass, const std::string& devname,
                            const std::string& dev, const std::map<std::string, std::string>& uevent) {
  std::string dir = "sys" + devpath;
  Dir(dir);
  std::string text = "SUBSYSTEM=" + klass + "\n";
  if (!devname.empty()) text += "DEVNAME=" + devname + "\n";
  for (const auto& [k, v] : uevent) text += k + "=" + v + "\n";
  File(dir + "/uevent", text);
  if (!dev.empty()) File(dir + "/dev", dev + "\n");
  Link(dir + "/subsystem", UpToSysfs(devpath) + "class/" + klass);
}

void SysfsTree::OtherBusDevice(const std::string& devpath, const std::string& bus,
                               const std::map<std::string, std::string>& uevent) {
  std::string dir = "sys" + devpath;
  Dir(dir);
  std::string text = "SUBSYSTEM=" + bus + "\n";
  for (const auto& [k, v] : uevent) text += k + "=" + v + "\n";
  File(dir + "/uevent", text);
  Link(dir + "/subsystem", UpToSysfs(devpath) + "bus/" + bus);
}

}  // namespace liken::testing
