// Device metadata files of prepared claims, through the kubelet's gRPC calls: layout, content, the CDI
// mount, unprepare, recovery after a restart, refresh after a USB re-enumeration.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cdi/cdi_spec.h"
#include "common/files.h"
#include "kubelet/claim_checkpoint.h"
#include "kubelet/device_metadata_writer.h"
#include "kubelet/kubelet_plugin.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/fake_scanner.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::testing {
namespace {

constexpr char kNode[] = "node-a";
constexpr char kGpuUid[] = "a1b2c3d4-0000-4000-8000-00000000000a";
constexpr char kUsbUid[] = "b1b2c3d4-0000-4000-8000-00000000000b";
constexpr char kTemplateUid[] = "c1b2c3d4-0000-4000-8000-00000000000c";
constexpr char kExtendedUid[] = "d1b2c3d4-0000-4000-8000-00000000000d";
constexpr char kContainerDir[] = "/var/run/kubernetes.io/dra-device-attributes";

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The first object of a metadata stream (the newest version).
nlohmann::json FirstObject(const std::string& stream) {
  size_t end = stream.find("\n}\n");
  EXPECT_NE(end, std::string::npos) << stream;
  return nlohmann::json::parse(stream.substr(0, end + 3));
}

// The same with `annotations` added to the claim's metadata.
nlohmann::json Annotated(nlohmann::json claim, const std::string& pod_claim_name) {
  claim["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", pod_claim_name}};
  return claim;
}

discovery::PublishedDevice WithAttributes(discovery::PublishedDevice d) {
  d.attributes["liken.sh/bus"] = std::string(d.name.rfind("usb", 0) == 0 ? "usb" : "pci");
  d.attributes["liken.sh/renderNode"] = d.allow_multiple_allocations;
  d.attributes["resource.kubernetes.io/numaNode"] = int64_t{0};
  return d;
}

class DeviceMetadataTest : public ::testing::TestWithParam<DraVersion> {
 protected:
  void SetUp() override {
    kubelet_root_ = dir_.path() + "/kubelet";
    cdi_root_ = dir_.path() + "/cdi";
    std::ofstream(dir_.path() + "/boot_id") << "boot-1\n";
    inventory_ = InventoryOf({WithAttributes(GpuRender()), WithAttributes(GpuDisplay()), WithAttributes(UsbSerial())});
    scanner_.Set(inventory_);
    lookup_.Add(ClaimJson("ns", "gpu", kGpuUid, kNode, {{"render", "pci-0000-00-02-0"},
                                                         {"display", "pci-0000-00-02-0-display"}}));
    lookup_.Add(ClaimJson("ns", "serial", kUsbUid, kNode, {{"port", "usb-1-2-1-0"}}));
    lookup_.Add(Annotated(ClaimJson("ns", "pod-x-gpu-7f2kq", kTemplateUid, kNode, {{"render", "pci-0000-00-02-0"}}),
                          "gpu"));
    // The scheduler's claim for a pod's extended resources: one request per container and resource.
    nlohmann::json ext = ClaimJson("ns", "pod-y-extended-resources-q2w", kExtendedUid, kNode,
                                   {{"container-0-request-0", "pci-0000-00-02-0"},
                                    {"container-0-request-1", "usb-1-2-1-0"}});
    ext["metadata"]["annotations"] = {{"resource.kubernetes.io/extended-resource-claim", "true"}};
    lookup_.Add(ext);
    StartPlugin();
  }

  void TearDown() override {
    kubelet_.reset();
    plugin_.reset();
  }

  void StartPlugin() {
    kubelet::KubeletPluginOptions o;
    o.node_name = kNode;
    o.kubelet_root = kubelet_root_;
    o.cdi_root = cdi_root_;
    o.sysfs_root = dir_.path() + "/sys";
    o.boot_id_path = dir_.path() + "/boot_id";
    o.shutdown_grace = absl::Seconds(5);
    o.metadata_root = metadata_root_;
    plugin_ = std::make_unique<kubelet::KubeletPlugin>(o, &scanner_, &lookup_, nullptr);
    LIKEN_ASSERT_OK(plugin_->Start());
    plugin_->UpdateInventory(inventory_);
    auto k = TestKubelet::Register(kubelet_root_, GetParam());
    LIKEN_ASSERT_OK(k);
    kubelet_ = std::move(*k);
  }

  void RestartPlugin() {
    kubelet_.reset();
    plugin_.reset();
    StartPlugin();
  }

  std::string MetadataRoot() const {
    return metadata_root_.empty() ? kubelet_root_ + "/plugins/liken.sh/metadata" : metadata_root_;
  }
  std::string HostFile(const std::string& uid, const std::string& request) const {
    return absl::StrCat(MetadataRoot(), "/", uid, "/", request, "/liken.sh-metadata.json");
  }
  nlohmann::json Spec(const std::string& uid) const {
    auto text = ReadFileToString(absl::StrCat(cdi_root_, "/liken.sh-", uid, ".json"));
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json();
  }
  nlohmann::json Metadata(const std::string& uid, const std::string& request) const {
    auto text = ReadFileToString(HostFile(uid, request));
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? FirstObject(*text) : nlohmann::json();
  }

  TempDir dir_;
  std::string kubelet_root_, cdi_root_;
  std::string metadata_root_;  // empty: the default under the kubelet root
  discovery::Inventory inventory_;
  FakeScanner scanner_;
  FakeClaimLookup lookup_;
  std::unique_ptr<kubelet::KubeletPlugin> plugin_;
  std::unique_ptr<TestKubelet> kubelet_;
};

TEST_P(DeviceMetadataTest, FilesGoToTheConfiguredRootAndTheSpecMountsThemFromThere) {
  metadata_root_ = dir_.path() + "/run/liken.sh/metadata";  // its parents do not exist yet
  RestartPlugin();
  auto answer = kubelet_->Prepare({{"ns", kGpuUid, "gpu"}});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_TRUE(std::filesystem::exists(HostFile(kGpuUid, "render")));
  EXPECT_FALSE(std::filesystem::exists(kubelet_root_ + "/plugins/liken.sh/metadata/" + kGpuUid))
      << "nothing under the kubelet root";
  EXPECT_EQ(Spec(kGpuUid)["devices"][2]["containerEdits"]["mounts"][0]["hostPath"], HostFile(kGpuUid, "render"));
  EXPECT_EQ(Metadata(kGpuUid, "render")["requests"][0]["devices"][0]["name"], "pci-0000-00-02-0");
  auto gone = kubelet_->Unprepare({{"ns", kGpuUid, "gpu"}});
  LIKEN_ASSERT_OK(gone);
  EXPECT_FALSE(std::filesystem::exists(metadata_root_ + "/" + kGpuUid));
}

TEST_P(DeviceMetadataTest, EachRequestOfADirectClaimGetsAFileMountedAtTheStandardPath) {
  auto answer = kubelet_->Prepare({{"ns", kGpuUid, "gpu"}});
  LIKEN_ASSERT_OK(answer);
  const ClaimAnswer& a = answer->at(kGpuUid);
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(a.devices.size(), 2u);
  // The mount travels with the request's device, so only containers using that request get it.
  EXPECT_EQ(a.devices[0].cdi_device_ids,
            (std::vector<std::string>{absl::StrCat("liken.sh/device=", kGpuUid, "-pci-0000-00-02-0"),
                                      absl::StrCat("liken.sh/device=", kGpuUid, "_render")}));
  EXPECT_EQ(a.devices[1].cdi_device_ids,
            (std::vector<std::string>{absl::StrCat("liken.sh/device=", kGpuUid, "-pci-0000-00-02-0-display"),
                                      absl::StrCat("liken.sh/device=", kGpuUid, "_display")}));

  nlohmann::json spec = Spec(kGpuUid);
  ASSERT_EQ(spec["devices"].size(), 4u);
  EXPECT_EQ(spec["devices"][2],
            (nlohmann::json{{"name", absl::StrCat(kGpuUid, "_render")},
                            {"containerEdits",
                             {{"mounts",
                               {{{"hostPath", HostFile(kGpuUid, "render")},
                                 {"containerPath", absl::StrCat(kContainerDir, "/resourceclaims/gpu/render/liken.sh-metadata.json")},
                                 {"options", {"ro", "nosuid", "nodev", "bind"}}}}}}}}));
  EXPECT_EQ(spec["devices"][3]["containerEdits"]["mounts"][0]["containerPath"],
            absl::StrCat(kContainerDir, "/resourceclaims/gpu/display/liken.sh-metadata.json"));

  nlohmann::json m = Metadata(kGpuUid, "render");
  EXPECT_EQ(m["apiVersion"], "metadata.resource.k8s.io/v1beta1");
  EXPECT_EQ(m["metadata"], (nlohmann::json{{"name", "gpu"}, {"namespace", "ns"}, {"uid", kGpuUid}, {"generation", 1}}));
  EXPECT_FALSE(m.contains("podClaimName"));
  ASSERT_EQ(m["requests"].size(), 1u);
  EXPECT_EQ(m["requests"][0]["name"], "render");
  ASSERT_EQ(m["requests"][0]["devices"].size(), 1u);
  const nlohmann::json& d = m["requests"][0]["devices"][0];
  EXPECT_EQ(d["driver"], "liken.sh");
  EXPECT_EQ(d["pool"], kNode);
  EXPECT_EQ(d["name"], "pci-0000-00-02-0");
  EXPECT_EQ(d["attributes"], (nlohmann::json{{"liken.sh/bus", {{"string", "pci"}}},
                                             {"liken.sh/devicePaths", {{"strings", {"/dev/dri/renderD128"}}}},
                                             {"liken.sh/renderNode", {{"bool", true}}},
                                             {"resource.kubernetes.io/numaNode", {{"int", 0}}}}));
  EXPECT_EQ(Metadata(kGpuUid, "display")["requests"][0]["devices"][0]["name"], "pci-0000-00-02-0-display");
}

// Served from the node's claim cache (the normal case: the slim claim, without its raw JSON).
TEST_P(DeviceMetadataTest, TemplateClaimIsMountedUnderThePodsNameForIt) {
  ASSERT_TRUE(lookup_.GetCached("ns", "pod-x-gpu-7f2kq", kTemplateUid).ok());
  EXPECT_TRUE(lookup_.GetCached("ns", "pod-x-gpu-7f2kq", kTemplateUid)->metadata.raw.empty()) << "served slim";
  auto answer = kubelet_->Prepare({{"ns", kTemplateUid, "pod-x-gpu-7f2kq"}});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->at(kTemplateUid).error, "");
  EXPECT_EQ(Spec(kTemplateUid)["devices"][1]["containerEdits"]["mounts"][0]["containerPath"],
            absl::StrCat(kContainerDir, "/resourceclaimtemplates/gpu/render/liken.sh-metadata.json"));
  nlohmann::json m = Metadata(kTemplateUid, "render");
  EXPECT_EQ(m["podClaimName"], "gpu");
  EXPECT_EQ(m["metadata"]["name"], "pod-x-gpu-7f2kq");
}

// Served without the cache (an API read): the same path.
TEST_P(DeviceMetadataTest, TemplateClaimReadFromTheServerIsMountedUnderThePodsNameForIt) {
  lookup_.Uncached("ns", "pod-x-gpu-7f2kq");
  const int gets = lookup_.gets();
  auto answer = kubelet_->Prepare({{"ns", kTemplateUid, "pod-x-gpu-7f2kq"}});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->at(kTemplateUid).error, "");
  EXPECT_EQ(lookup_.gets(), gets + 1) << "read from the server";
  EXPECT_EQ(Spec(kTemplateUid)["devices"][1]["containerEdits"]["mounts"][0]["containerPath"],
            absl::StrCat(kContainerDir, "/resourceclaimtemplates/gpu/render/liken.sh-metadata.json"));
  EXPECT_EQ(Metadata(kTemplateUid, "render")["podClaimName"], "gpu");
}

// A claim the scheduler made for extended resources has no pod-claim-name: its files are where the upstream helper
// puts any claim without one, resourceclaims/<claim>/<request>/, one per request (a container that asks for two
// resources gets both requests' devices and files); unprepare removes them.
TEST_P(DeviceMetadataTest, ExtendedResourceClaimIsMountedUnderItsOwnName) {
  auto answer = kubelet_->Prepare({{"ns", kExtendedUid, "pod-y-extended-resources-q2w"}});
  LIKEN_ASSERT_OK(answer);
  const ClaimAnswer& a = answer->at(kExtendedUid);
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].request_names, std::vector<std::string>{"container-0-request-0"});
  EXPECT_EQ(a.devices[1].request_names, std::vector<std::string>{"container-0-request-1"});
  const nlohmann::json spec = Spec(kExtendedUid);
  std::vector<std::string> paths;
  for (const auto& d : spec["devices"]) {
    if (d["containerEdits"].contains("mounts")) paths.push_back(d["containerEdits"]["mounts"][0]["containerPath"]);
  }
  EXPECT_THAT(paths, ::testing::UnorderedElementsAre(
                         absl::StrCat(kContainerDir, "/resourceclaims/pod-y-extended-resources-q2w/container-0-request-0/liken.sh-metadata.json"),
                         absl::StrCat(kContainerDir, "/resourceclaims/pod-y-extended-resources-q2w/container-0-request-1/liken.sh-metadata.json")));
  nlohmann::json m = Metadata(kExtendedUid, "container-0-request-1");
  EXPECT_FALSE(m.contains("podClaimName"));
  EXPECT_EQ(m["requests"][0]["devices"][0]["name"], "usb-1-2-1-0");
  auto gone = kubelet_->Unprepare({{"ns", kExtendedUid, "pod-y-extended-resources-q2w"}});
  LIKEN_ASSERT_OK(gone);
  EXPECT_EQ(gone->at(kExtendedUid), "");
  EXPECT_FALSE(Exists(HostFile(kExtendedUid, "container-0-request-0")));
  EXPECT_FALSE(Exists(absl::StrCat(cdi_root_, "/liken.sh-", kExtendedUid, ".json")));
}

TEST_P(DeviceMetadataTest, UsbDeviceCarriesItsBusAndDeviceNumbers) {
  auto answer = kubelet_->Prepare({{"ns", kUsbUid, "serial"}});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->at(kUsbUid).error, "");
  const nlohmann::json attrs = Metadata(kUsbUid, "port")["requests"][0]["devices"][0]["attributes"];
  EXPECT_EQ(attrs["liken.sh/usbBusNumber"], (nlohmann::json{{"int", 1}}));
  EXPECT_EQ(attrs["liken.sh/usbDeviceNumber"], (nlohmann::json{{"int", 4}}));
  EXPECT_EQ(attrs["liken.sh/devicePaths"], (nlohmann::json{{"strings", {"/dev/bus/usb/001/004", "/dev/ttyUSB0"}}}));
  // A GPU has no USB numbers.
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kGpuUid, "gpu"}}));
  EXPECT_FALSE(Metadata(kGpuUid, "render")["requests"][0]["devices"][0]["attributes"].contains("liken.sh/usbBusNumber"));
}

TEST_P(DeviceMetadataTest, ReEnumerationRefreshesTheFileWithTheSpec) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kUsbUid, "serial"}}));
  discovery::PublishedDevice moved = WithAttributes(UsbSerial());
  moved.nodes[0] = Node("/dev/bus/usb/001/009", 189, 8, "usb");
  inventory_ = InventoryOf({WithAttributes(GpuRender()), WithAttributes(GpuDisplay()), moved});
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 1);
  nlohmann::json m = Metadata(kUsbUid, "port");
  EXPECT_EQ(m["metadata"]["generation"], 2);
  EXPECT_EQ(m["requests"][0]["devices"][0]["attributes"]["liken.sh/usbDeviceNumber"], (nlohmann::json{{"int", 9}}));
  EXPECT_EQ(Spec(kUsbUid)["devices"][0]["containerEdits"]["deviceNodes"][0]["path"], "/dev/bus/usb/001/009");
  // Nothing changed: nothing is written, the generation stays.
  auto again = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(*again, 0);
  EXPECT_EQ(Metadata(kUsbUid, "port")["metadata"]["generation"], 2);
}

TEST_P(DeviceMetadataTest, RefreshRestoresAVanishedFileWithoutRewritingTheSpec) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kUsbUid, "serial"}}));
  const std::string before = *ReadFileToString(HostFile(kUsbUid, "port"));
  ASSERT_EQ(::unlink(HostFile(kUsbUid, "port").c_str()), 0);
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 0);  // no spec rewritten
  auto after = ReadFileToString(HostFile(kUsbUid, "port"));
  LIKEN_ASSERT_OK(after);
  EXPECT_EQ(*after, before);  // same content, same generation
}

TEST_P(DeviceMetadataTest, RefreshChecksTheFilesOnlyWhenTheMetadataRootChanged) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kUsbUid, "serial"}, {"ns", kGpuUid, "gpu"}}));
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(inventory_));  // finds every file: the root is remembered
  const std::string before = *ReadFileToString(HostFile(kUsbUid, "port"));
  // A file removed deep inside a claim's directory leaves the root as it was: a pass does not look for it (the
  // claim's next prepare or a restart writes it again).
  ASSERT_EQ(::unlink(HostFile(kUsbUid, "port").c_str()), 0);
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(inventory_));
  EXPECT_FALSE(Exists(HostFile(kUsbUid, "port"))) << "a no-change pass looked at the claims' files";
  // A claim's directory removed changes the root: the next pass checks every claim's files and restores them.
  std::filesystem::remove_all(absl::StrCat(MetadataRoot(), "/", kGpuUid));
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 0);  // no spec rewritten
  EXPECT_TRUE(Exists(HostFile(kGpuUid, "render")));
  EXPECT_TRUE(Exists(HostFile(kGpuUid, "display")));
  auto after = ReadFileToString(HostFile(kUsbUid, "port"));
  LIKEN_ASSERT_OK(after);
  EXPECT_EQ(*after, before);
  // The whole root lost (a tmpfs): restored by the next pass too.
  std::filesystem::remove_all(MetadataRoot());
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(inventory_));
  EXPECT_TRUE(Exists(HostFile(kGpuUid, "render")));
  EXPECT_TRUE(Exists(HostFile(kUsbUid, "port")));
}

// Whether a thread of this process waits for a flock(2) held elsewhere ("->" entries of /proc/locks name waiters).
bool ThisProcessWaitsOnAFlock() {
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string id, arrow, kind, mode, access, pid;
    in >> id >> arrow >> kind >> mode >> access >> pid;
    if (arrow == "->" && kind == "FLOCK" && pid == std::to_string(::getpid())) return true;
  }
  return false;
}

// A pass that finds a prepared claim's metadata files missing writes them under the claims directory's lock, like
// every other write of a claim's files: while another driver instance (a rolling update) holds it to unprepare the
// claim, the pass waits, then finds the claim unprepared and forgets it instead of writing orphan files.
TEST_P(DeviceMetadataTest, APassRewritesMissingFilesOnlyUnderTheClaimsDirectoryLock) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kGpuUid, "gpu"}}));
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(inventory_));  // the root is remembered
  const std::string claims = kubelet_root_ + "/plugins/liken.sh/claims";
  ScopedFd other(::open(claims.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));  // the other instance's lock
  ASSERT_GE(other.get(), 0);
  ASSERT_EQ(::flock(other.get(), LOCK_EX), 0);
  std::filesystem::remove_all(absl::StrCat(MetadataRoot(), "/", kGpuUid));  // the root changes: files looked at
  std::atomic<bool> done{false};
  absl::StatusOr<int> refreshed = 0;
  std::thread pass([&] {
    refreshed = plugin_->RefreshPreparedClaims(inventory_);
    done = true;
  });
  bool waited = false;
  while (!done && !(waited = ThisProcessWaitsOnAFlock())) std::this_thread::yield();
  if (waited) {
    // The other instance unprepares the claim while it holds the lock: spec, metadata and record removed.
    EXPECT_EQ(::unlink(absl::StrCat(cdi_root_, "/liken.sh-", kGpuUid, ".json").c_str()), 0);
    EXPECT_EQ(::unlink(absl::StrCat(claims, "/", kGpuUid, ".json").c_str()), 0);
  }
  ASSERT_EQ(::flock(other.get(), LOCK_UN), 0);
  pass.join();
  ASSERT_TRUE(waited) << "the pass wrote the missing metadata files without the claims directory's lock";
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_FALSE(Exists(absl::StrCat(MetadataRoot(), "/", kGpuUid))) << "orphan metadata of an unprepared claim";
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
}

TEST_P(DeviceMetadataTest, FilesAreNeverSharedAndUnprepareRemovesThem) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kGpuUid, "gpu"}}));
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kTemplateUid, "pod-x-gpu-7f2kq"}}));
  // Both claims hold the same shared render half, each in its own file.
  EXPECT_TRUE(Exists(HostFile(kGpuUid, "render")));
  EXPECT_TRUE(Exists(HostFile(kTemplateUid, "render")));
  EXPECT_NE(Metadata(kGpuUid, "render")["metadata"]["uid"], Metadata(kTemplateUid, "render")["metadata"]["uid"]);

  auto un = kubelet_->Unprepare({{"ns", kGpuUid, "gpu"}});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kGpuUid), "");
  EXPECT_FALSE(Exists(absl::StrCat(MetadataRoot(), "/", kGpuUid)));
  EXPECT_TRUE(Exists(HostFile(kTemplateUid, "render")));
}

TEST_P(DeviceMetadataTest, RestartRestoresVanishedFilesAndRemovesOrphans) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kGpuUid, "gpu"}}));
  const std::string before = *ReadFileToString(HostFile(kGpuUid, "render"));
  ASSERT_EQ(::unlink(HostFile(kGpuUid, "render").c_str()), 0);
  std::ofstream(HostFile(kGpuUid, "display")) << "damaged";
  const std::string orphan = absl::StrCat(MetadataRoot(), "/dead0000-0000-4000-8000-000000000000/req");
  LIKEN_ASSERT_OK(MakeDirectories(orphan));
  std::ofstream(orphan + "/liken.sh-metadata.json") << "{}";

  RestartPlugin();
  auto restored = ReadFileToString(HostFile(kGpuUid, "render"));
  LIKEN_ASSERT_OK(restored);
  EXPECT_EQ(*restored, before);
  EXPECT_EQ(Metadata(kGpuUid, "display")["requests"][0]["devices"][0]["name"], "pci-0000-00-02-0-display");
  EXPECT_FALSE(Exists(absl::StrCat(MetadataRoot(), "/dead0000-0000-4000-8000-000000000000")));
  // The answer after the restart still names the mounts.
  auto answer = kubelet_->Prepare({{"ns", kGpuUid, "gpu"}});
  LIKEN_ASSERT_OK(answer);
  EXPECT_THAT(answer->at(kGpuUid).devices[0].cdi_device_ids,
              ::testing::Contains(absl::StrCat("liken.sh/device=", kGpuUid, "_render")));
}

TEST_P(DeviceMetadataTest, APreparedClaimWhoseFileVanishedGetsItBack) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kUsbUid, "serial"}}));
  ASSERT_EQ(::unlink(HostFile(kUsbUid, "port").c_str()), 0);
  auto again = kubelet_->Prepare({{"ns", kUsbUid, "serial"}});
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(again->at(kUsbUid).error, "");
  EXPECT_TRUE(Exists(HostFile(kUsbUid, "port")));
}

TEST_P(DeviceMetadataTest, RecordKeepsWhatTheFilesNeed) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({{"ns", kTemplateUid, "pod-x-gpu-7f2kq"}}));
  auto text = ReadFileToString(absl::StrCat(kubelet_root_, "/plugins/liken.sh/claims/", kTemplateUid, ".json"));
  LIKEN_ASSERT_OK(text);
  auto record = kubelet::ParsePreparedClaim(*text);
  LIKEN_ASSERT_OK(record);
  EXPECT_EQ(record->claim.pod_claim_name, std::optional<std::string>("gpu"));
  EXPECT_EQ(record->claim.metadata_generation, 1);
  ASSERT_EQ(record->claim.delivered.size(), 1u);
  EXPECT_EQ(record->claim.delivered[0].attributes, WithAttributes(GpuRender()).attributes);
}

INSTANTIATE_TEST_SUITE_P(Versions, DeviceMetadataTest, ::testing::Values(DraVersion::kV1, DraVersion::kV1beta1),
                         [](const auto& info) { return info.param == DraVersion::kV1 ? "v1" : "v1beta1"; });

}  // namespace
}  // namespace liken::testing
