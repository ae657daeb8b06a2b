#include "kubelet/usb_rebinder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace liken::kubelet {
namespace {

class SysfsUsbRebinder : public UsbRebinder {
 public:
  explicit SysfsUsbRebinder(std::string sysfs_root) : root_(std::move(sysfs_root)) {}

  absl::Status RebindIfUnbound(const std::string& interface_name) override {
    if (interface_name.empty() || interface_name.find('/') != std::string::npos || interface_name[0] == '.') {
      return absl::InvalidArgumentError(absl::StrCat("invalid USB interface name '", interface_name, "'"));
    }
    std::string dir = absl::StrCat(root_, "/bus/usb/devices/", interface_name);
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return absl::OkStatus();  // unplugged: nothing to rebind
    if (::lstat(absl::StrCat(dir, "/driver").c_str(), &st) == 0) return absl::OkStatus();
    std::string probe = absl::StrCat(root_, "/bus/usb/drivers_probe");
    auto fd = OpenRegularFile(probe, FinalSymlink::kFollow, FileAccess::kWrite);  // never a FIFO's open
    if (!fd.ok()) return fd.status();
    ssize_t n;
    do {
      n = ::write(fd->get(), interface_name.data(), interface_name.size());
    } while (n < 0 && errno == EINTR);
    int err = errno;
    fd->Reset();
    if (n < 0) return absl::InternalError(absl::StrCat("write ", interface_name, " to ", probe, ": ", std::strerror(err)));
    if (static_cast<size_t>(n) != interface_name.size()) {
      return absl::InternalError(absl::StrCat("short write of ", interface_name, " to ", probe));
    }
    return absl::OkStatus();
  }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<UsbRebinder> NewSysfsUsbRebinder(std::string sysfs_root) {
  return std::make_unique<SysfsUsbRebinder>(std::move(sysfs_root));
}

}  // namespace liken::kubelet
