// The host side of device metadata: which files a claim gets, their host layout, and their record.
#include "kubelet/device_metadata_writer.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "kubelet/claim_checkpoint.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::kubelet {
namespace {

using ::liken::testing::TempDir;
using ::testing::ElementsAre;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// A claim with a two-device request (one through a subrequest), a second request, and a template name.
PreparedClaim SampleClaim() {
  PreparedClaim c;
  c.ref = {"ns", "f00d0000-0000-4000-8000-000000000001", "pod-x-gpus-k2j4d"};
  c.pod_claim_name = "gpus";
  c.metadata_generation = 3;
  c.results = {{{"gpus/large"}, "node-a", "pci-0000-43-00-0", {"id-a"}, std::nullopt},
               {{"gpus/large"}, "node-a", "pci-0000-c3-00-0", {"id-b"}, std::nullopt},
               {{"serial"}, "node-a", "usb-1-2-1-0", {"id-c"}, std::nullopt}};
  DeliveredDevice a{"pci-0000-43-00-0", {::liken::testing::Node("/dev/dri/renderD128", 226, 128, "drm"),
                                         ::liken::testing::Node("/dev/kfd", 511, 0, "kfd")}, {}, "/sys/a", {}};
  a.attributes["liken.sh/bus"] = std::string("pci");
  DeliveredDevice b{"pci-0000-c3-00-0", {::liken::testing::Node("/dev/dri/renderD129", 226, 129, "drm")}, {}, "/sys/b", {}};
  auto usb = ::liken::testing::UsbSerial("/sys/usb");
  DeliveredDevice u{usb.name, usb.nodes, usb.usb_interfaces, usb.sysfs_path, {}};
  u.attributes["resource.kubernetes.io/numaNode"] = int64_t{1};
  u.attributes["liken.sh/firmware"] = apis::VersionValue{"1.0.0"};
  c.delivered = {a, b, u};
  return c;
}

TEST(DeviceMetadataWriterTest, OneFilePerRequestWithItsDevicesInOrder) {
  auto files = MetadataFilesFor(SampleClaim());
  LIKEN_ASSERT_OK(files);
  ASSERT_EQ(files->size(), 2u);
  const cdi::DeviceMetadata& gpus = (*files)[0];
  EXPECT_EQ(gpus.request, "gpus/large");  // as allocated; the path uses "gpus"
  EXPECT_EQ(gpus.claim_name, "pod-x-gpus-k2j4d");
  EXPECT_EQ(gpus.pod_claim_name, std::optional<std::string>("gpus"));
  EXPECT_EQ(gpus.generation, 3);
  ASSERT_EQ(gpus.devices.size(), 2u);
  EXPECT_EQ(gpus.devices[0].name, "pci-0000-43-00-0");
  EXPECT_EQ(gpus.devices[0].driver, "liken.sh");
  EXPECT_EQ(gpus.devices[0].pool, "node-a");
  EXPECT_EQ(std::get<std::vector<std::string>>(gpus.devices[0].attributes.at(kAttrDevicePaths)),
            (std::vector<std::string>{"/dev/dri/renderD128", "/dev/kfd"}));
  EXPECT_EQ(std::get<std::string>(gpus.devices[0].attributes.at("liken.sh/bus")), "pci");
  EXPECT_EQ(gpus.devices[1].name, "pci-0000-c3-00-0");
  const cdi::DeviceMetadata& serial = (*files)[1];
  EXPECT_EQ(serial.request, "serial");
  ASSERT_EQ(serial.devices.size(), 1u);
  const auto& attrs = serial.devices[0].attributes;
  EXPECT_EQ(std::get<int64_t>(attrs.at(kAttrUsbBusNumber)), 1);
  EXPECT_EQ(std::get<int64_t>(attrs.at(kAttrUsbDeviceNumber)), 4);
  EXPECT_EQ(std::get<int64_t>(attrs.at("resource.kubernetes.io/numaNode")), 1);
  EXPECT_EQ(std::get<apis::VersionValue>(attrs.at("liken.sh/firmware")).semver, "1.0.0");
}

TEST(DeviceMetadataWriterTest, ARequestNameThatIsNoPathSegmentFailsTheClaim) {
  PreparedClaim c = SampleClaim();
  c.results[2].request_names = {".."};
  EXPECT_EQ(MetadataFilesFor(c).status().code(), absl::StatusCode::kInvalidArgument);
  c = SampleClaim();
  c.pod_claim_name = "a/b";
  EXPECT_EQ(MetadataFilesFor(c).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceMetadataWriterTest, CdiIdsGoToTheFirstResultOfEachRequestOnce) {
  PreparedClaim c = SampleClaim();
  auto files = MetadataFilesFor(c);
  LIKEN_ASSERT_OK(files);
  AddMetadataCdiIds(*files, &c);
  AddMetadataCdiIds(*files, &c);  // idempotent
  EXPECT_THAT(c.results[0].cdi_device_ids,
              ElementsAre("id-a", "liken.sh/device=f00d0000-0000-4000-8000-000000000001_gpus"));
  EXPECT_THAT(c.results[1].cdi_device_ids, ElementsAre("id-b"));
  EXPECT_THAT(c.results[2].cdi_device_ids,
              ElementsAre("id-c", "liken.sh/device=f00d0000-0000-4000-8000-000000000001_serial"));
}

TEST(DeviceMetadataWriterTest, WriteMatchPresentAndRemove) {
  TempDir dir;
  DeviceMetadataStore store(dir.path() + "/metadata");
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  PreparedClaim c = SampleClaim();
  const std::string& uid = c.ref.uid;
  auto files = MetadataFilesFor(c);
  LIKEN_ASSERT_OK(files);
  EXPECT_FALSE(store.Present(uid, {"gpus", "serial"}));
  LIKEN_ASSERT_OK(store.Write(uid, *files));
  EXPECT_EQ(store.HostPath(uid, "gpus"), dir.path() + "/metadata/" + uid + "/gpus/liken.sh-metadata.json");
  auto text = ReadFileToString(store.HostPath(uid, "gpus"));
  LIKEN_ASSERT_OK(text);
  EXPECT_EQ(*text, cdi::EncodeDeviceMetadataStream((*files)[0]));
  EXPECT_TRUE(store.Present(uid, {"gpus", "serial"}));
  EXPECT_TRUE(store.Matches(uid, *files));
  auto uids = store.ListClaimUids();
  LIKEN_ASSERT_OK(uids);
  EXPECT_THAT(*uids, ElementsAre(uid));

  // A damaged file no longer matches; a later write drops a request the claim no longer has.
  std::ofstream(store.HostPath(uid, "serial")) << "damaged";
  EXPECT_TRUE(store.Present(uid, {"serial"}));
  EXPECT_FALSE(store.Matches(uid, *files));
  std::vector<cdi::DeviceMetadata> only_gpus = {(*files)[0]};
  LIKEN_ASSERT_OK(store.Write(uid, only_gpus));
  EXPECT_FALSE(Exists(dir.path() + "/metadata/" + uid + "/serial"));

  LIKEN_ASSERT_OK(store.Remove(uid));
  EXPECT_FALSE(Exists(dir.path() + "/metadata/" + uid));
  LIKEN_ASSERT_OK(store.Remove(uid));  // absent: fine
}

TEST(DeviceMetadataWriterTest, RemoveNeverFollowsAPlantedLink) {
  TempDir dir;
  DeviceMetadataStore store(dir.path() + "/metadata");
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/victim/req"));
  std::ofstream(dir.path() + "/victim/req/keep") << "x";
  LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/metadata/claim-1"));
  ASSERT_EQ(::symlink((dir.path() + "/victim/req").c_str(), (dir.path() + "/metadata/claim-1/req").c_str()), 0);
  ASSERT_EQ(::symlink((dir.path() + "/victim").c_str(), (dir.path() + "/metadata/claim-2").c_str()), 0);
  LIKEN_ASSERT_OK(store.Remove("claim-1"));
  LIKEN_ASSERT_OK(store.Remove("claim-2"));
  EXPECT_TRUE(Exists(dir.path() + "/victim/req/keep"));
  EXPECT_FALSE(Exists(dir.path() + "/metadata/claim-1"));
  EXPECT_FALSE(Exists(dir.path() + "/metadata/claim-2"));
}

TEST(DeviceMetadataWriterTest, ASymlinkedRootIsNeitherWrittenNorRemovedThrough) {
  TempDir dir;
  const std::string uid = SampleClaim().ref.uid;
  LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/victim/" + uid + "/serial"));
  std::ofstream(dir.path() + "/victim/" + uid + "/serial/keep") << "x";
  ASSERT_EQ(::symlink((dir.path() + "/victim").c_str(), (dir.path() + "/metadata").c_str()), 0);
  DeviceMetadataStore store(dir.path() + "/metadata");
  auto files = MetadataFilesFor(SampleClaim());
  LIKEN_ASSERT_OK(files);
  absl::Status written = store.Write(uid, *files);
  EXPECT_EQ(written.code(), absl::StatusCode::kFailedPrecondition) << written;
  absl::Status removed = store.Remove(uid);
  EXPECT_EQ(removed.code(), absl::StatusCode::kFailedPrecondition) << removed;
  // Start-up refuses it too (it made the parents of a missing root and followed a linked one, and then every
  // prepare failed and no unprepare succeeded); nothing is listed through it.
  absl::Status ensured = store.EnsureDirectory();
  EXPECT_EQ(ensured.code(), absl::StatusCode::kFailedPrecondition) << ensured;
  EXPECT_EQ(store.ListClaimUids().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(store.Present(uid, {"serial"})) << "a file reached through the linked root counts as missing";
  EXPECT_TRUE(Exists(dir.path() + "/victim/" + uid + "/serial/keep"));
  EXPECT_FALSE(Exists(dir.path() + "/victim/" + uid + "/gpus"));
}

TEST(DeviceMetadataWriterTest, WriteNeverFollowsAPlantedClaimOrRequestDirectory) {
  TempDir dir;
  DeviceMetadataStore store(dir.path() + "/metadata");
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/victim"));
  const std::string uid = SampleClaim().ref.uid;
  ASSERT_EQ(::symlink((dir.path() + "/victim").c_str(), (dir.path() + "/metadata/" + uid).c_str()), 0);
  auto files = MetadataFilesFor(SampleClaim());
  LIKEN_ASSERT_OK(files);
  EXPECT_EQ(store.Write(uid, *files).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Exists(dir.path() + "/victim/gpus"));
  ASSERT_EQ(::unlink((dir.path() + "/metadata/" + uid).c_str()), 0);
  LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/metadata/" + uid));
  ASSERT_EQ(::symlink((dir.path() + "/victim").c_str(), (dir.path() + "/metadata/" + uid + "/serial").c_str()), 0);
  EXPECT_EQ(store.Write(uid, *files).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Exists(dir.path() + "/victim/liken.sh-metadata.json"));
}

// Starts a thread that, at the first removal of an entry of `dir` (inotify IN_DELETE), renames `dir` to `moved` and
// puts a symlink to `target` in its place: the swap lands between the removal's check of `dir` and its later uses.
class SwapForLinkOnFirstDelete {
 public:
  SwapForLinkOnFirstDelete(const std::string& dir, std::string moved, std::string target)
      : watch_(::inotify_init1(IN_CLOEXEC)) {
    armed_ = watch_ >= 0 && ::inotify_add_watch(watch_, dir.c_str(), IN_DELETE) >= 0;
    if (!armed_) return;
    thread_ = std::thread([this, dir, moved = std::move(moved), target = std::move(target)] {
      struct pollfd p = {watch_, POLLIN, 0};
      if (::poll(&p, 1, 30000) != 1) return;  // only a bound on a stuck removal, not a timed assertion
      swapped_ = ::rename(dir.c_str(), moved.c_str()) == 0 && ::symlink(target.c_str(), dir.c_str()) == 0;
    });
  }
  ~SwapForLinkOnFirstDelete() {
    if (thread_.joinable()) thread_.join();
    if (watch_ >= 0) ::close(watch_);
  }
  bool armed() const { return armed_; }
  // Whether the swap happened; waits for the thread.
  bool Swapped() {
    if (thread_.joinable()) thread_.join();
    return swapped_;
  }

 private:
  int watch_;
  bool armed_ = false;
  bool swapped_ = false;
  std::thread thread_;
};

// The race the directory handles close: a claim's request directory swapped for a symlink to another directory
// while Remove empties it (after the check that it is a directory, before the unlinks below it). Removing by path
// below checked directories unlinked the files of the link's target; through handles nothing there is touched.
TEST(DeviceMetadataWriterTest, ADirectorySwappedForALinkWhileItIsRemovedIsNeverRemovedThrough) {
  TempDir dir;
  DeviceMetadataStore store(dir.path() + "/metadata");
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  const std::string request = dir.path() + "/metadata/claim-1/req";
  LIKEN_ASSERT_OK(MakeDirectories(request));
  LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/victim"));
  constexpr int kFiles = 2000;  // the removal takes long enough for the swap to land inside it
  for (int i = 0; i < kFiles; ++i) {
    const std::string name = absl::StrCat("f", 10000 + i);
    std::ofstream(request + "/" + name) << "x";
    std::ofstream(dir.path() + "/victim/" + name) << "keep";
  }
  SwapForLinkOnFirstDelete swap(request, dir.path() + "/moved", dir.path() + "/victim");
  ASSERT_TRUE(swap.armed());
  absl::Status removed = store.Remove("claim-1");
  ASSERT_TRUE(swap.Swapped());
  auto victims = ListDirectory(dir.path() + "/victim");
  LIKEN_ASSERT_OK(victims);
  EXPECT_EQ(victims->size(), static_cast<size_t>(kFiles)) << "files removed through the swapped-in link; " << removed;
  // The link itself is removed with the claim's directory; what was renamed away is whatever the removal had not
  // reached yet.
  EXPECT_TRUE(removed.ok()) << removed;
  EXPECT_FALSE(Exists(dir.path() + "/metadata/claim-1"));
}

// The same race one level up: the claim's own directory swapped for a link to another claim-like tree after Remove
// checked it and listed it, between the removals of its request directories. Removing by path below the checked
// directory emptied the link's target; through the claim's directory handle nothing there is listed or unlinked.
TEST(DeviceMetadataWriterTest, AClaimDirectorySwappedForALinkWhileItIsRemovedIsNeverRemovedThrough) {
  TempDir dir;
  DeviceMetadataStore store(dir.path() + "/metadata");
  LIKEN_ASSERT_OK(store.EnsureDirectory());
  const std::string claim = dir.path() + "/metadata/claim-1";
  const std::string file = "liken.sh-metadata.json";
  constexpr int kRequests = 500;  // the removal takes long enough for the swap to land inside it
  for (int i = 0; i < kRequests; ++i) {
    const std::string req = absl::StrCat("req", 1000 + i);
    LIKEN_ASSERT_OK(MakeDirectories(claim + "/" + req));
    LIKEN_ASSERT_OK(MakeDirectories(dir.path() + "/victim/" + req));
    std::ofstream(claim + "/" + req + "/" + file) << "x";
    std::ofstream(dir.path() + "/victim/" + req + "/" + file) << "keep";
  }
  SwapForLinkOnFirstDelete swap(claim, dir.path() + "/moved", dir.path() + "/victim");
  ASSERT_TRUE(swap.armed());
  absl::Status removed = store.Remove("claim-1");
  ASSERT_TRUE(swap.Swapped());
  int kept = 0;
  for (int i = 0; i < kRequests; ++i) kept += Exists(absl::StrCat(dir.path(), "/victim/req", 1000 + i, "/", file));
  EXPECT_EQ(kept, kRequests) << "files removed through the swapped-in link; " << removed;
  EXPECT_TRUE(removed.ok()) << removed;
  EXPECT_FALSE(Exists(claim)) << "the link that took the claim directory's place is removed itself";
}

TEST(DeviceMetadataWriterTest, RecordKeepsAttributesPodClaimNameAndGeneration) {
  PreparedClaim c = SampleClaim();
  auto parsed = ParsePreparedClaim(PreparedClaimToJson(c, "boot-x"));
  LIKEN_ASSERT_OK(parsed);
  EXPECT_EQ(parsed->claim, c);
  // A record written before these fields existed still reads: no template name, generation 1.
  auto old = ParsePreparedClaim(
      R"({"version":1,"bootID":"b","claim":{"namespace":"n","uid":"u","name":"x"},"results":[],"delivered":[
          {"name":"d","nodes":[],"usbInterfaces":[],"sysfsPath":""}]})");
  LIKEN_ASSERT_OK(old);
  EXPECT_FALSE(old->claim.pod_claim_name.has_value());
  EXPECT_EQ(old->claim.metadata_generation, 1);
  EXPECT_TRUE(old->claim.delivered[0].attributes.empty());
}

}  // namespace
}  // namespace liken::kubelet
