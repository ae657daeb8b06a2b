// Device metadata written and removed through directory handles while umockdev's preload is loaded, as in the test
// image (the driver runs under umockdev-run in the node, kind and e2e tiers). Run under
//   umockdev-run -d test/machines/laptop.umockdev -- liken_kubelet_metadata_umockdev_test
// The preload rewrites a relative name joined to the working directory, not to the directory handle it is opened
// through: from "/", openat(claim, "dev") opened the testbed's /dev. Every claim of those tiers names its request
// "dev", so the metadata file went into the driver's mock /dev, runc found no file to bind-mount into the claim's
// container, and the container never started.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "cdi/device_metadata.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "discovery/inventory.h"
#include "kubelet/device_metadata_writer.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::kubelet {
namespace {

using ::liken::testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool SameDirectory(int fd, const std::string& path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// A USB serial claim with two requests named like the testbed's roots.
PreparedClaim ClaimWithRequestsDevAndSys() {
  PreparedClaim c;
  c.ref = {"default", "f00d0000-0000-4000-8000-00000000d0d0", "serial-1"};
  c.results = {{{"dev"}, "node-a", "usb-1-1-1-0", {"id-a"}, std::nullopt},
               {{"sys"}, "node-a", "usb-1-1-1-1", {"id-b"}, std::nullopt}};
  auto usb = ::liken::testing::UsbSerial("/sys/usb");
  DeliveredDevice a{"usb-1-1-1-0", usb.nodes, usb.usb_interfaces, usb.sysfs_path, {}};
  DeliveredDevice b{"usb-1-1-1-1", usb.nodes, usb.usb_interfaces, usb.sysfs_path, {}};
  c.delivered = {a, b};
  return c;
}

// Names of the entries of `dir` as this process sees them (through the preload: the testbed's for /dev and /sys).
std::vector<std::string> Entries(const std::string& dir) {
  auto names = ListDirectory(dir);
  return names.ok() ? *names : std::vector<std::string>{};
}

class DeviceMetadataUmockdevTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testbed_ = std::getenv("UMOCKDEV_DIR") != nullptr ? std::getenv("UMOCKDEV_DIR") : "";
    if (testbed_.empty()) GTEST_SKIP() << "not running under umockdev-run";
    cwd_ = ScopedFd(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_GE(cwd_.get(), 0);
    root_ = dir_.path() + "/metadata";
    file_ = cdi::MetadataFileName(discovery::kDriverName);
  }
  void TearDown() override {
    if (cwd_.get() >= 0) EXPECT_EQ(::fchdir(cwd_.get()), 0);
  }

  // Whether a relative "dev" opened through a handle of `parent` lands in the testbed's /dev from the working
  // directory now: what makes this test reproduce the failure at all.
  bool PreloadRewritesDev(const std::string& parent) {
    ScopedFd p(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (p.get() < 0 || (::mkdirat(p.get(), "dev", 0755) != 0 && errno != EEXIST)) return false;
    ScopedFd d(::openat(p.get(), "dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    const bool rewritten = d.get() >= 0 && !SameDirectory(d.get(), parent + "/dev");
    ::unlinkat(p.get(), "dev", AT_REMOVEDIR);
    return rewritten;
  }

  TempDir dir_;
  std::string testbed_, root_, file_;
  ScopedFd cwd_;
};

// The driver's working directory was "/" in the test image. The handles must never write into, or remove from, the
// testbed: a write either puts each file where the CDI spec mounts it from or fails, and a removal either removes
// the claim's tree or fails with it in place. Through the earlier handle version the write succeeded with the files
// in the mock /dev and /sys, and the removal emptied the mock /dev.
TEST_F(DeviceMetadataUmockdevTest, FromTheRootDirectoryNothingIsWrittenOrRemovedInTheTestbed) {
  ASSERT_EQ(::chdir("/"), 0);
  LIKEN_ASSERT_OK(MakeDirectories(root_));
  if (!PreloadRewritesDev(root_)) GTEST_SKIP() << "this umockdev resolves relative names through their handle";
  const std::vector<std::string> dev_before = Entries("/dev"), sys_before = Entries("/sys");
  ASSERT_FALSE(dev_before.empty()) << "the recording's /dev";

  DeviceMetadataStore store(root_, Durability::kUnsynced);
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  const PreparedClaim claim = ClaimWithRequestsDevAndSys();
  auto files = MetadataFilesFor(claim);
  LIKEN_ASSERT_OK(files);
  absl::Status written = store.Write(claim.ref.uid, *files);
  for (const char* request : {"dev", "sys"}) {
    if (written.ok()) {
      EXPECT_TRUE(Exists(store.HostPath(claim.ref.uid, request)))
          << "written, but not where the CDI spec mounts it from: " << store.HostPath(claim.ref.uid, request);
    }
  }
  if (!written.ok()) EXPECT_EQ(written.code(), absl::StatusCode::kFailedPrecondition) << written;
  EXPECT_FALSE(Exists(testbed_ + "/dev/" + file_)) << "a metadata file in the testbed's /dev";
  EXPECT_FALSE(Exists(testbed_ + "/sys/" + file_)) << "a metadata file in the testbed's /sys";

  // A claim's tree as a prepare leaves it, made by absolute paths (which the preload leaves alone here).
  const std::string claim_dir = absl::StrCat(root_, "/", claim.ref.uid);
  LIKEN_ASSERT_OK(MakeDirectories(claim_dir + "/dev"));
  std::ofstream(claim_dir + "/dev/" + file_) << "{}";
  absl::Status removed = store.Remove(claim.ref.uid);
  if (removed.ok()) {
    EXPECT_FALSE(Exists(claim_dir)) << "removed, but the claim's directory is still there";
  } else {
    EXPECT_EQ(removed.code(), absl::StatusCode::kFailedPrecondition) << removed;
    EXPECT_TRUE(Exists(claim_dir + "/dev/" + file_));
  }
  EXPECT_EQ(Entries("/dev"), dev_before) << "the testbed's /dev changed; " << removed;
  EXPECT_EQ(Entries("/sys"), sys_before) << "the testbed's /sys changed; " << removed;
}

// From any other working directory (the test image's is its recordings' directory), requests named "dev" and "sys"
// are written where the CDI spec mounts them from and removed with the claim, the testbed untouched.
TEST_F(DeviceMetadataUmockdevTest, FromTheImagesWorkingDirectoryFilesGoWhereTheSpecMountsThemFrom) {
  ASSERT_EQ(::chdir(dir_.path().c_str()), 0);
  const std::vector<std::string> dev_before = Entries("/dev");
  DeviceMetadataStore store(root_, Durability::kUnsynced);
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  const PreparedClaim claim = ClaimWithRequestsDevAndSys();
  auto files = MetadataFilesFor(claim);
  LIKEN_ASSERT_OK(files);
  LIKEN_ASSERT_OK(store.Write(claim.ref.uid, *files));
  EXPECT_TRUE(Exists(store.HostPath(claim.ref.uid, "dev")));
  EXPECT_TRUE(Exists(store.HostPath(claim.ref.uid, "sys")));
  EXPECT_TRUE(store.Matches(claim.ref.uid, *files));
  EXPECT_TRUE(store.Present(claim.ref.uid, {"dev", "sys"}));
  EXPECT_FALSE(Exists(testbed_ + "/dev/" + file_));
  LIKEN_ASSERT_OK(store.Remove(claim.ref.uid));
  EXPECT_FALSE(Exists(absl::StrCat(root_, "/", claim.ref.uid)));
  EXPECT_EQ(Entries("/dev"), dev_before);
}

}  // namespace
}  // namespace liken::kubelet
