// End-to-end tests of the kubelet plugin through a test kubelet over unix sockets, for v1 and v1beta1.
#include "kubelet/kubelet_plugin.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <set>
#include <utility>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cdi/cdi_spec.h"
#include "kubelet/claim_resolver.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "test/kubelet/file_sync_counter.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/fake_scanner.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kNode[] = "node-a";
// One UID starting with a letter (cdiVersion 0.3.0) and one with a digit (0.5.0).
constexpr char kGpuUid[] = "a1b2c3d4-0000-4000-8000-000000000001";
constexpr char kUsbUid[] = "9f8e7d6c-0000-4000-8000-000000000002";

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::trunc);
  out << content;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The expected JSON of one CDI device.
nlohmann::json CdiDevice(const std::string& uid, const std::string& device,
                         const std::vector<discovery::DeviceNode>& nodes) {
  nlohmann::json dn = nlohmann::json::array();
  for (const auto& n : nodes) {
    dn.push_back({{"path", n.path}, {"type", std::string(1, n.type)}, {"major", n.major}, {"minor", n.minor}});
  }
  return {{"name", uid + "-" + device}, {"containerEdits", {{"deviceNodes", dn}}}};
}

// Records the prepare side's claim events (nodestate::PreparedClaimEvents), each as "prepared NS/NAME UID
// DEVICE=PATH,PATH ..." or "unprepared NS/NAME UID". Thread-safe.
class RecordingClaimEvents final : public nodestate::PreparedClaimEvents {
 public:
  void SetPrepared(nodestate::PreparedClaimDevices claim) override {
    std::string event = absl::StrCat("prepared ", claim.namespace_name, "/", claim.name, " ", claim.uid);
    for (const auto& d : claim.devices) absl::StrAppend(&event, " ", d.device, "=", absl::StrJoin(d.dev_paths, ","));
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(event));
  }
  void SetUnprepared(const std::string& namespace_name, const std::string& name, const std::string& uid) override {
    std::string event = absl::StrCat("unprepared ", namespace_name, "/", name, " ", uid);
    if (on_unprepared_) absl::StrAppend(&event, " ", on_unprepared_());
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(event));
  }
  // Called in SetUnprepared, as the node pass it asks for would run then; its text is appended to the event.
  // Set before the plugin starts.
  void OnUnprepared(std::function<std::string()> hook) { on_unprepared_ = std::move(hook); }
  // The events since the last call. Thread-safe.
  std::vector<std::string> Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(events_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::function<std::string()> on_unprepared_;
};

class KubeletPluginTest : public ::testing::TestWithParam<DraVersion> {
 protected:
  void SetUp() override {
    kubelet_root_ = dir_.path() + "/kubelet";
    cdi_root_ = dir_.path() + "/cdi";
    sysfs_root_ = dir_.path() + "/sys";
    boot_id_path_ = dir_.path() + "/boot_id";
    WriteFile(boot_id_path_, "boot-1\n");
    inventory_ = InventoryOf({GpuRender(), GpuDisplay(), UsbSerial()});
    scanner_.Set(inventory_);
    lookup_.Add(ClaimJson("ns", "gpu", kGpuUid, kNode, {{"render", "pci-0000-00-02-0"},
                                                         {"display", "pci-0000-00-02-0-display"}}));
    lookup_.Add(ClaimJson("ns", "serial", kUsbUid, kNode, {{"port", "usb-1-2-1-0"}}));
    StartPlugin();
  }

  void TearDown() override {
    kubelet_.reset();
    plugin_.reset();
  }

  kubelet::KubeletPluginOptions Options() const {
    kubelet::KubeletPluginOptions o;
    o.node_name = kNode;
    o.kubelet_root = kubelet_root_;
    o.cdi_root = cdi_root_;
    o.sysfs_root = sysfs_root_;
    o.boot_id_path = boot_id_path_;
    o.pod_uid = pod_uid_;
    o.shutdown_grace = absl::Seconds(5);
    o.device_metadata = device_metadata_;  // these tests pin the device-node specs; metadata: device_metadata_test.cc
    if (tell_claim_events_) o.claim_events = &claim_events_;
    return o;
  }

  void StartPlugin() {
    plugin_ = std::make_unique<kubelet::KubeletPlugin>(Options(), &scanner_, &lookup_, &observer_);
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

  std::string SpecPath(const std::string& uid) const { return absl::StrCat(cdi_root_, "/liken.sh-", uid, ".json"); }
  std::string RecordPath(const std::string& uid) const {
    return absl::StrCat(kubelet_root_, "/plugins/liken.sh/claims/", uid, ".json");
  }

  // Reads a spec, checks it parses as CDI, and returns its raw JSON.
  nlohmann::json ReadSpecJson(const std::string& uid) {
    struct stat st;
    EXPECT_EQ(::lstat(SpecPath(uid).c_str(), &st), 0) << SpecPath(uid);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "spec is not a regular file";
    auto text = ReadFileToString(SpecPath(uid));
    EXPECT_TRUE(text.ok()) << text.status();
    if (!text.ok()) return nullptr;
    auto parsed = cdi::ParseSpec(*text);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return nlohmann::json::parse(*text);
  }

  static kubelet::ClaimRef Gpu() { return {"ns", kGpuUid, "gpu"}; }
  static kubelet::ClaimRef Usb() { return {"ns", kUsbUid, "serial"}; }

  nlohmann::json ExpectedGpuSpec() const {
    return {{"cdiVersion", "0.3.0"},
            {"kind", "liken.sh/device"},
            {"devices",
             {CdiDevice(kGpuUid, "pci-0000-00-02-0", GpuRender().nodes),
              CdiDevice(kGpuUid, "pci-0000-00-02-0-display", GpuDisplay().nodes)}}};
  }
  nlohmann::json ExpectedUsbSpec(const std::vector<discovery::DeviceNode>& nodes) const {
    return {{"cdiVersion", "0.5.0"}, {"kind", "liken.sh/device"}, {"devices", {CdiDevice(kUsbUid, "usb-1-2-1-0", nodes)}}};
  }

  TempDir dir_;
  std::string kubelet_root_, cdi_root_, sysfs_root_, boot_id_path_, pod_uid_;
  bool device_metadata_ = false;
  bool tell_claim_events_ = false;
  mutable RecordingClaimEvents claim_events_;  // told when tell_claim_events_ is set (Options() is const)
  discovery::Inventory inventory_;
  FakeScanner scanner_;
  FakeClaimLookup lookup_;
  CountingObserver observer_;
  std::unique_ptr<kubelet::KubeletPlugin> plugin_;
  std::unique_ptr<TestKubelet> kubelet_;
};

TEST_P(KubeletPluginTest, RegistersLikeTheKubeletExpects) {
  const RegisteredPlugin& p = kubelet_->plugin();
  EXPECT_EQ(p.type, "DRAPlugin");
  EXPECT_EQ(p.name, "liken.sh");
  EXPECT_EQ(p.endpoint, kubelet_root_ + "/plugins/liken.sh/dra.sock");
  EXPECT_EQ(p.registration_socket, kubelet_root_ + "/plugins_registry/liken.sh-reg.sock");
  EXPECT_EQ(p.supported_versions, (std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin",
                                                            "v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth"}));
  EXPECT_TRUE(plugin_->registered());
  EXPECT_EQ(observer_.registrations.load(), 1);
}

TEST_P(KubeletPluginTest, PreparesGpuRenderAndDisplayClaim) {
  auto answer = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->size(), 1u);
  const ClaimAnswer& a = answer->at(kGpuUid);
  EXPECT_EQ(a.error, "");
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].request_names, std::vector<std::string>{"render"});
  EXPECT_EQ(a.devices[0].pool, kNode);
  EXPECT_EQ(a.devices[0].device, "pci-0000-00-02-0");
  EXPECT_EQ(a.devices[0].cdi_device_ids,
            std::vector<std::string>{absl::StrCat("liken.sh/device=", kGpuUid, "-pci-0000-00-02-0")});
  EXPECT_EQ(a.devices[1].request_names, std::vector<std::string>{"display"});
  EXPECT_EQ(a.devices[1].pool, kNode);
  EXPECT_EQ(a.devices[1].device, "pci-0000-00-02-0-display");
  EXPECT_EQ(a.devices[1].cdi_device_ids,
            std::vector<std::string>{absl::StrCat("liken.sh/device=", kGpuUid, "-pci-0000-00-02-0-display")});
  EXPECT_FALSE(a.devices[0].share_id.has_value());
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  EXPECT_TRUE(Exists(RecordPath(kGpuUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 1u);
  EXPECT_EQ(observer_.gauge.load(), 1u);
}

TEST_P(KubeletPluginTest, PreparesUsbSerialClaimWithTtyAndUsbfsNodes) {
  auto answer = kubelet_->Prepare({Usb()});
  LIKEN_ASSERT_OK(answer);
  const ClaimAnswer& a = answer->at(kUsbUid);
  EXPECT_EQ(a.error, "");
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].request_names, std::vector<std::string>{"port"});
  EXPECT_EQ(a.devices[0].pool, kNode);
  EXPECT_EQ(a.devices[0].device, "usb-1-2-1-0");
  EXPECT_EQ(a.devices[0].cdi_device_ids,
            std::vector<std::string>{absl::StrCat("liken.sh/device=", kUsbUid, "-usb-1-2-1-0")});
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(UsbSerial().nodes));
}

TEST_P(KubeletPluginTest, ShareIdReachesV1KubeletsOnly) {
  const std::string uid = "b0000000-0000-4000-8000-000000000003";
  lookup_.Add(ClaimJson("ns", "shared", uid, kNode, {{"render", "pci-0000-00-02-0", "", "liken.sh", "share-7"}}));
  auto answer = kubelet_->Prepare({{"ns", uid, "shared"}});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->at(uid).devices.size(), 1u);
  if (GetParam() == DraVersion::kV1) {
    EXPECT_EQ(answer->at(uid).devices[0].share_id, std::optional<std::string>("share-7"));
  } else {
    EXPECT_FALSE(answer->at(uid).devices[0].share_id.has_value());
  }
}

TEST_P(KubeletPluginTest, PrepareTwiceGivesTheSameAnswerWithoutReadingTheClaimAgain) {
  auto first = kubelet_->Prepare({Gpu(), Usb()});
  LIKEN_ASSERT_OK(first);
  int gets = lookup_.gets();
  auto second = kubelet_->Prepare({Gpu(), Usb()});
  LIKEN_ASSERT_OK(second);
  EXPECT_EQ(lookup_.gets(), gets);
  for (const char* uid : {kGpuUid, kUsbUid}) {
    EXPECT_EQ(second->at(uid).error, "");
    ASSERT_EQ(second->at(uid).devices.size(), first->at(uid).devices.size());
    for (size_t i = 0; i < first->at(uid).devices.size(); ++i) {
      EXPECT_EQ(second->at(uid).devices[i].cdi_device_ids, first->at(uid).devices[i].cdi_device_ids);
      EXPECT_EQ(second->at(uid).devices[i].request_names, first->at(uid).devices[i].request_names);
    }
  }
  EXPECT_EQ(plugin_->prepared_claims(), 2u);
}

TEST_P(KubeletPluginTest, UnprepareTwiceSucceedsAndRemovesEverything) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  for (int i = 0; i < 2; ++i) {
    auto answer = kubelet_->Unprepare({Gpu()});
    LIKEN_ASSERT_OK(answer);
    ASSERT_EQ(answer->size(), 1u);
    EXPECT_EQ(answer->at(kGpuUid), "");
  }
  EXPECT_FALSE(Exists(SpecPath(kGpuUid)));
  EXPECT_FALSE(Exists(RecordPath(kGpuUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  // A claim this node never prepared.
  auto unknown = kubelet_->Unprepare({{"ns", "c0000000-0000-4000-8000-00000000000f", "never"}});
  LIKEN_ASSERT_OK(unknown);
  EXPECT_EQ(unknown->at("c0000000-0000-4000-8000-00000000000f"), "");
}

TEST_P(KubeletPluginTest, RestartBetweenPrepareAndUnprepareLosesNothing) {
  auto first = kubelet_->Prepare({Gpu(), Usb()});
  LIKEN_ASSERT_OK(first);
  RestartPlugin();
  EXPECT_EQ(plugin_->prepared_claims(), 2u);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  int gets = lookup_.gets();
  auto again = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(lookup_.gets(), gets) << "a restart forgot the prepared claim";
  EXPECT_EQ(again->at(kGpuUid).devices.size(), 2u);
  auto un = kubelet_->Unprepare({Gpu(), Usb()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kGpuUid), "");
  EXPECT_EQ(un->at(kUsbUid), "");
  EXPECT_FALSE(Exists(SpecPath(kGpuUid)));
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
}

TEST_P(KubeletPluginTest, RestartRestoresSpecsThatVanishedWhileDown) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  kubelet_.reset();
  plugin_.reset();
  ASSERT_EQ(::unlink(SpecPath(kGpuUid).c_str()), 0);
  WriteFile(cdi_root_ + "/liken.sh-orphan-uid.json", ExpectedGpuSpec().dump());
  StartPlugin();
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  EXPECT_FALSE(Exists(cdi_root_ + "/liken.sh-orphan-uid.json")) << "a spec no record accounts for survived";
}

TEST_P(KubeletPluginTest, UnreadableRecordKeepsItsClaimsSpec) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  kubelet_.reset();
  plugin_.reset();
  // A newer driver version wrote this record, then was rolled back; the other one is damaged.
  const std::string newer = R"({"version":2,"bootID":"boot-1","claim":{"uid":")" + std::string(kGpuUid) + R"("}})";
  WriteFile(RecordPath(kGpuUid), newer);
  WriteFile(RecordPath(kUsbUid), "{\"version\":1,");
  StartPlugin();
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec()) << "the spec of a claim in use was removed";
  EXPECT_TRUE(Exists(SpecPath(kUsbUid))) << "the spec of a claim in use was removed";
  EXPECT_TRUE(Exists(RecordPath(kGpuUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  // The kubelet's unprepare still cleans up.
  auto un = kubelet_->Unprepare({Gpu(), Usb()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kGpuUid), "");
  EXPECT_FALSE(Exists(SpecPath(kGpuUid)));
  EXPECT_FALSE(Exists(RecordPath(kGpuUid)));
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
  EXPECT_FALSE(Exists(RecordPath(kUsbUid)));
}

TEST_P(KubeletPluginTest, ClaimUnpreparedByTheOtherPodOfARollingUpdateIsForgottenNotRewritten) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  ASSERT_EQ(plugin_->prepared_claims(), 2u);
  // The new driver pod, sharing both directories, unprepares both claims: spec first, then the record.
  for (const std::string& uid : {std::string(kGpuUid), std::string(kUsbUid)}) {
    ASSERT_EQ(::unlink(SpecPath(uid).c_str()), 0);
    ASSERT_EQ(::unlink(RecordPath(uid).c_str()), 0);
  }
  // This pod's reconcile pass must not resurrect the GPU claim's spec.
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 0);
  EXPECT_FALSE(Exists(SpecPath(kGpuUid)));
  EXPECT_FALSE(Exists(RecordPath(kGpuUid)));
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
  EXPECT_FALSE(Exists(RecordPath(kUsbUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  EXPECT_EQ(observer_.gauge.load(), 0u);
  // A prepare that reaches this pod later prepares afresh (reads the claim, writes record and spec).
  int gets = lookup_.gets();
  auto again = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(again->at(kGpuUid).error, "");
  EXPECT_EQ(lookup_.gets(), gets + 1);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  EXPECT_TRUE(Exists(RecordPath(kGpuUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 1u);
}

TEST_P(KubeletPluginTest, PrepareOfAClaimUnpreparedByTheOtherPodPreparesAfresh) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  ASSERT_EQ(::unlink(SpecPath(kUsbUid).c_str()), 0);
  ASSERT_EQ(::unlink(RecordPath(kUsbUid).c_str()), 0);
  // The claim now holds a replugged adapter: the recorded answer would be stale.
  discovery::PublishedDevice replugged = UsbSerial();
  replugged.nodes[0] = Node("/dev/bus/usb/001/007", 189, 6, "usb");
  plugin_->UpdateInventory(InventoryOf({GpuRender(), GpuDisplay(), replugged}));
  int gets = lookup_.gets();
  auto again = kubelet_->Prepare({Usb()});
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(again->at(kUsbUid).error, "");
  EXPECT_EQ(lookup_.gets(), gets + 1) << "the forgotten claim was answered from memory";
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(replugged.nodes));
  EXPECT_TRUE(Exists(RecordPath(kUsbUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 1u);
}

TEST_P(KubeletPluginTest, RefreshIgnoresAnInventoryOlderThanAPreparesRescan) {
  plugin_->UpdateInventory(InventoryOf({GpuRender(), GpuDisplay()}));  // the adapter appeared after the last pass
  // The reconcile loop starts a scan and sees the adapter's old nodes ...
  const auto scan_started = kubelet::ScanClock::now();
  discovery::Inventory old_scan = InventoryOf({GpuRender(), GpuDisplay(), UsbSerial()});
  // ... meanwhile it is replugged and a prepare rescans, finding the new nodes.
  discovery::PublishedDevice replugged = UsbSerial();
  replugged.nodes[0] = Node("/dev/bus/usb/001/007", 189, 6, "usb");
  scanner_.Set(InventoryOf({GpuRender(), GpuDisplay(), replugged}));
  auto answer = kubelet_->Prepare({Usb()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kUsbUid).error, "");
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(replugged.nodes));
  // The older scan arrives last: it must not take the spec back to the old nodes.
  auto refreshed = plugin_->RefreshPreparedClaims(old_scan, scan_started);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 0);
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(replugged.nodes));
  // A scan begun later is taken.
  auto later = plugin_->RefreshPreparedClaims(old_scan, kubelet::ScanClock::now());
  LIKEN_ASSERT_OK(later);
  EXPECT_EQ(*later, 1);
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(UsbSerial().nodes));
}

TEST_P(KubeletPluginTest, RebootIsNotMistakenForRestart) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  kubelet_.reset();
  plugin_.reset();
  WriteFile(boot_id_path_, "boot-2\n");
  StartPlugin();
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  EXPECT_FALSE(Exists(SpecPath(kGpuUid)));
  EXPECT_FALSE(Exists(RecordPath(kGpuUid)));
  // The kubelet prepares it again after the reboot: resolved afresh.
  int gets = lookup_.gets();
  auto answer = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_EQ(lookup_.gets(), gets + 1);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
}

// Nothing on the prepare and unprepare paths is fsynced (records, CDI specs, metadata files): what an fsync would
// add is survival of a power loss, which is a reboot, whose records are dropped (above) and whose claims the
// kubelet prepares again.
TEST_P(KubeletPluginTest, PrepareAndUnprepareNeverFsync) {
  device_metadata_ = true;
  RestartPlugin();
  const int64_t at_start = liken::testing::FileSyncCalls();
  LIKEN_ASSERT_OK(WriteFileAtomically(dir_.path(), "synced", "x", Durability::kSynced));
  ASSERT_EQ(liken::testing::FileSyncCalls(), at_start + 2) << "the counter sees a durable write's two fsyncs";
  const int64_t before = liken::testing::FileSyncCalls();
  for (int round = 0; round < 2; ++round) {  // the second round: prepares and unprepares of known claims too
    auto both = kubelet_->Prepare({Gpu(), Usb()});
    LIKEN_ASSERT_OK(both);
    EXPECT_EQ(both->at(kGpuUid).error, "");
    EXPECT_TRUE(Exists(absl::StrCat(kubelet_root_, "/plugins/liken.sh/metadata/", kGpuUid))) << "no metadata files";
    LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
    LIKEN_ASSERT_OK(kubelet_->Unprepare({Usb()}));
    LIKEN_ASSERT_OK(kubelet_->Unprepare({Gpu(), Usb()}));  // the last claim: temp files swept too
  }
  EXPECT_EQ(liken::testing::FileSyncCalls(), before);
}

TEST_P(KubeletPluginTest, CdiSpecDeletedBehindTheDriversBackIsWrittenAgain) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  ASSERT_EQ(::unlink(SpecPath(kGpuUid).c_str()), 0);
  auto again = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(again->at(kGpuUid).error, "");
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  // The reconcile pass restores it too.
  ASSERT_EQ(::unlink(SpecPath(kGpuUid).c_str()), 0);
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 1);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
}

TEST_P(KubeletPluginTest, RefreshRewritesOnlySpecsWhoseNodesChanged) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  auto unchanged = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(unchanged);
  EXPECT_EQ(*unchanged, 0);
  // The adapter was replugged: a new usbfs device number.
  discovery::PublishedDevice replugged = UsbSerial();
  replugged.nodes[0] = Node("/dev/bus/usb/001/007", 189, 6, "usb");
  auto changed = plugin_->RefreshPreparedClaims(InventoryOf({GpuRender(), GpuDisplay(), replugged}));
  LIKEN_ASSERT_OK(changed);
  EXPECT_EQ(*changed, 1);
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(replugged.nodes));
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  EXPECT_EQ(observer_.refreshed.load(), 1);
  // The new nodes were checkpointed: they survive a restart.
  RestartPlugin();
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(replugged.nodes));
}

// The swap: a claimed adapter (FTDI 0403:6001, serial A1) replaced in its port by an identical model with another
// serial. The claim keeps A1's nodes (never B2's), A1 counts as gone (unhealthy, not present for the claim's status);
// A1 back in its port, enumerated anew, is refreshed into the claim's spec and healthy again.
TEST_P(KubeletPluginTest, AnotherUnitInTheClaimedPortIsNotTheClaimedDeviceComingBack) {
  discovery::PublishedDevice a1 = UsbSerial();
  a1.attributes = {{"liken.sh/vendor", std::string("0403")},
                   {"liken.sh/product", std::string("6001")},
                   {"liken.sh/serial", std::string("A1")}};
  inventory_ = InventoryOf({GpuRender(), GpuDisplay(), a1});
  plugin_->UpdateInventory(inventory_);
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(a1.nodes));

  discovery::PublishedDevice b2 = a1;
  b2.attributes["liken.sh/serial"] = std::string("B2");
  b2.nodes[0] = Node("/dev/bus/usb/001/007", 189, 6, "usb");
  b2.nodes[1] = Node("/dev/ttyUSB1", 188, 1, "tty");
  auto refreshed = plugin_->RefreshPreparedClaims(InventoryOf({GpuRender(), GpuDisplay(), b2}));
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 0) << "no CDI refresh to another unit's nodes";
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(a1.nodes));
  EXPECT_EQ(observer_.unhealthy.load(), 1u) << "the claimed device is gone for its claim";
  EXPECT_EQ(plugin_->PresentDevices(), (std::set<std::string>{GpuRender().name, GpuDisplay().name}));

  discovery::PublishedDevice a1_back = a1;
  a1_back.nodes[0] = Node("/dev/bus/usb/001/008", 189, 7, "usb");
  refreshed = plugin_->RefreshPreparedClaims(InventoryOf({GpuRender(), GpuDisplay(), a1_back}));
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 1) << "the claimed unit back: its new nodes reach the claim";
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(a1_back.nodes));
  EXPECT_EQ(observer_.unhealthy.load(), 0u);
  EXPECT_EQ(plugin_->PresentDevices()->count(a1.name), 1u);
}

// A pass counts the devices prepared claims hold that the node no longer publishes (liken_unhealthy_claimed_devices).
TEST_P(KubeletPluginTest, RefreshCountsClaimedDevicesNoLongerPublished) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  observer_.unhealthy = 99;
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(inventory_));
  EXPECT_EQ(observer_.unhealthy.load(), 0u);
  // The serial adapter is unplugged.
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(InventoryOf({GpuRender(), GpuDisplay()})));
  EXPECT_EQ(observer_.unhealthy.load(), 1u);
  // And plugged back.
  LIKEN_ASSERT_OK(plugin_->RefreshPreparedClaims(inventory_));
  EXPECT_EQ(observer_.unhealthy.load(), 0u);
}

TEST_P(KubeletPluginTest, DeviceUnpluggedBetweenAllocationAndPrepareFailsOnlyThatClaim) {
  // The reconcile loop last saw the adapter; since then it was unplugged (its sysfs directory is gone).
  const std::string usb_sysfs = dir_.path() + "/usb-device";
  ASSERT_EQ(::mkdir(usb_sysfs.c_str(), 0755), 0);
  plugin_->UpdateInventory(InventoryOf({GpuRender(), GpuDisplay(), UsbSerial(usb_sysfs)}));
  ASSERT_EQ(::rmdir(usb_sysfs.c_str()), 0);
  scanner_.Set(InventoryOf({GpuRender(), GpuDisplay()}));
  int scans = scanner_.scans();
  auto answer = kubelet_->Prepare({Usb(), Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_THAT(answer->at(kUsbUid).error, HasSubstr("usb-1-2-1-0"));
  EXPECT_THAT(answer->at(kUsbUid).error, HasSubstr("not present on this node"));
  EXPECT_THAT(answer->at(kUsbUid).devices, IsEmpty());
  EXPECT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_EQ(scanner_.scans(), scans + 1) << "a vanished device should be confirmed by one rescan";
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
  EXPECT_FALSE(Exists(RecordPath(kUsbUid)));
  EXPECT_EQ(observer_.prepare_errors.load(), 1);
}

TEST_P(KubeletPluginTest, DeviceTheSnapshotLacksIsFoundByARescan) {
  plugin_->UpdateInventory(InventoryOf({GpuRender(), GpuDisplay()}));  // the adapter appeared after the last pass
  auto answer = kubelet_->Prepare({Usb()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kUsbUid).error, "");
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(UsbSerial().nodes));
}

TEST_P(KubeletPluginTest, HundredClaimsInOneCall) {
  std::vector<kubelet::ClaimRef> refs;
  auto devices = NumberedDevices(100);
  plugin_->UpdateInventory(InventoryOf(devices));
  for (int i = 0; i < 100; ++i) {
    std::string uid = absl::StrCat("d", i, "-0000-4000-8000-000000000000");
    std::string name = absl::StrCat("claim-", i);
    lookup_.Add(ClaimJson("ns", name, uid, kNode, {{"req", devices[i].name}}));
    refs.push_back({"ns", uid, name});
  }
  auto answer = kubelet_->Prepare(refs);
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->size(), 100u);
  for (int i = 0; i < 100; ++i) {
    const ClaimAnswer& a = answer->at(refs[i].uid);
    EXPECT_EQ(a.error, "") << refs[i].uid;
    ASSERT_EQ(a.devices.size(), 1u);
    EXPECT_EQ(a.devices[0].device, devices[i].name);
    nlohmann::json want = {{"cdiVersion", "0.3.0"},
                           {"kind", "liken.sh/device"},
                           {"devices", {CdiDevice(refs[i].uid, devices[i].name, devices[i].nodes)}}};
    EXPECT_EQ(ReadSpecJson(refs[i].uid), want);
  }
  EXPECT_EQ(plugin_->prepared_claims(), 100u);
  auto un = kubelet_->Unprepare(refs);
  LIKEN_ASSERT_OK(un);
  ASSERT_EQ(un->size(), 100u);
  for (const auto& [uid, error] : *un) EXPECT_EQ(error, "") << uid;
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  auto left = ListDirectory(cdi_root_);
  LIKEN_ASSERT_OK(left);
  EXPECT_THAT(*left, IsEmpty());
}

TEST_P(KubeletPluginTest, TheReadsOfOneCallOverlap) {
  // Each of the first kMaxConcurrentReads claims' lookups waits at a gate: read one by one, the first would
  // wait forever; read concurrently, all reach their gates before any is released.
  std::vector<kubelet::ClaimRef> refs;
  std::vector<std::shared_ptr<FakeClaimLookup::Gate>> gates;
  auto devices = NumberedDevices(12);
  plugin_->UpdateInventory(InventoryOf(devices));
  for (int i = 0; i < 12; ++i) {
    std::string uid = absl::StrCat("e", i, "-0000-4000-8000-000000000000");
    std::string name = absl::StrCat("claim-", i);
    lookup_.Add(ClaimJson("ns", name, uid, kNode, {{"req", devices[i].name}}));
    refs.push_back({"ns", uid, name});
    if (gates.size() < kubelet::ClaimResolver::kMaxConcurrentReads) gates.push_back(lookup_.HoldNext("ns", name));
  }
  absl::StatusOr<std::map<std::string, ClaimAnswer>> answer;
  std::thread call([&] { answer = kubelet_->Prepare(refs); });
  bool all_entered = true;
  for (auto& gate : gates) all_entered &= gate->entered.WaitForNotificationWithTimeout(absl::Seconds(60));
  for (auto& gate : gates) gate->release.Notify();
  call.join();
  EXPECT_TRUE(all_entered) << "the claims of one call were read one at a time";
  LIKEN_ASSERT_OK(answer);
  for (const auto& ref : refs) EXPECT_EQ(answer->at(ref.uid).error, "") << ref.uid;
  EXPECT_EQ(plugin_->prepared_claims(), 12u);
}

TEST_P(KubeletPluginTest, ConcurrentCallsForManyClaims) {
  {
    // One claim's slow API read does not hold up another claim's prepare.
    auto gate = lookup_.HoldNext("ns", "gpu");
    absl::StatusOr<std::map<std::string, ClaimAnswer>> held;
    std::thread slow([&] { held = kubelet_->Prepare({Gpu()}); });
    gate->entered.WaitForNotification();
    auto other = kubelet_->Prepare({Usb()});
    EXPECT_FALSE(gate->release.HasBeenNotified());
    gate->release.Notify();
    slow.join();
    LIKEN_ASSERT_OK(other);
    EXPECT_EQ(other->at(kUsbUid).error, "");
    LIKEN_ASSERT_OK(held);
    EXPECT_EQ(held->at(kGpuUid).error, "");
    LIKEN_ASSERT_OK(kubelet_->Unprepare({Gpu(), Usb()}));
  }
  constexpr int kThreads = 8;
  constexpr int kClaimsPerThread = 12;
  auto devices = NumberedDevices(kThreads * kClaimsPerThread);
  auto all = devices;
  all.push_back(GpuRender());
  plugin_->UpdateInventory(InventoryOf(all));
  std::vector<std::vector<kubelet::ClaimRef>> refs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kClaimsPerThread; ++i) {
      int n = t * kClaimsPerThread + i;
      std::string uid = absl::StrCat("e", n, "-0000-4000-8000-000000000000");
      std::string name = absl::StrCat("claim-", n);
      // Every claim also shares the render node, which allows multiple allocations.
      lookup_.Add(ClaimJson("ns", name, uid, kNode, {{"dev", devices[n].name}, {"gpu", "pci-0000-00-02-0"}}));
      refs[t].push_back({"ns", uid, name});
    }
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2; ++round) {
        for (const auto& ref : refs[t]) {
          auto p = kubelet_->Prepare({ref});
          if (!p.ok() || p->at(ref.uid).error != "" || p->at(ref.uid).devices.size() != 2) failures++;
          auto again = kubelet_->Prepare({ref});
          if (!again.ok() || again->at(ref.uid).error != "") failures++;
        }
        for (const auto& ref : refs[t]) {
          auto u = kubelet_->Unprepare({ref});
          if (!u.ok() || u->at(ref.uid) != "") failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  auto left = ListDirectory(cdi_root_);
  LIKEN_ASSERT_OK(left);
  EXPECT_THAT(*left, IsEmpty());
}

TEST_P(KubeletPluginTest, MalformedRequestsGetInvalidArgument) {
  const std::vector<std::vector<kubelet::ClaimRef>> bad = {
      {{"ns", "", "gpu"}},
      {{"", kGpuUid, "gpu"}},
      {{"ns", kGpuUid, ""}},
      {{"ns", "../../etc/passwd", "gpu"}},
      {{"ns", kGpuUid, "."}},
      {{"ns", kGpuUid, ".."}},
      {{"..", kGpuUid, "gpu"}},
      {Gpu(), Gpu()},
  };
  for (const auto& claims : bad) {
    auto p = kubelet_->Prepare(claims);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
    auto u = kubelet_->Unprepare(claims);
    EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument) << u.status();
  }
  // Bad input is echoed back as a short prefix, not whole.
  auto huge = kubelet_->Prepare({{"ns", std::string(1 << 20, 'u') + "/", "gpu"}});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(huge.status().message().size(), 300u);
  EXPECT_EQ(lookup_.gets(), 0) << "a malformed claim reached the API";
  auto ok = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(ok);
  EXPECT_EQ(ok->at(kGpuUid).error, "");
  auto empty = kubelet_->Prepare({});
  LIKEN_ASSERT_OK(empty);
  EXPECT_THAT(*empty, IsEmpty());
}

TEST_P(KubeletPluginTest, UidMismatchFailsThatClaimOnly) {
  // The claim was deleted and created again under the same name.
  lookup_.Add(ClaimJson("ns", "serial", "f0000000-0000-4000-8000-0000000000aa", kNode, {{"port", "usb-1-2-1-0"}}));
  auto answer = kubelet_->Prepare({Usb(), Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_THAT(answer->at(kUsbUid).error, HasSubstr("has UID f0000000-0000-4000-8000-0000000000aa"));
  EXPECT_THAT(answer->at(kUsbUid).error, HasSubstr(kUsbUid));
  EXPECT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
}

TEST_P(KubeletPluginTest, MissingAllocationFailsThatClaimOnly) {
  const std::string unallocated = "a0000000-0000-4000-8000-0000000000b1";
  const std::string elsewhere = "a0000000-0000-4000-8000-0000000000b2";
  const std::string other_driver = "a0000000-0000-4000-8000-0000000000b3";
  const std::string missing = "a0000000-0000-4000-8000-0000000000b4";
  lookup_.Add(ClaimJson("ns", "unallocated", unallocated, kNode, {}, /*allocated=*/false));
  lookup_.Add(ClaimJson("ns", "elsewhere", elsewhere, kNode, {{"r", "pci-0000-00-02-0", "node-b"}}));
  lookup_.Add(ClaimJson("ns", "other-driver", other_driver, kNode, {{"r", "gpu-0", "", "gpu.example.com"}}));
  auto answer = kubelet_->Prepare({{"ns", unallocated, "unallocated"},
                                   {"ns", elsewhere, "elsewhere"},
                                   {"ns", other_driver, "other-driver"},
                                   {"ns", missing, "missing"},
                                   Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_THAT(answer->at(unallocated).error, HasSubstr("is not allocated"));
  EXPECT_THAT(answer->at(elsewhere).error, HasSubstr("no device of driver liken.sh allocated in pool node-a"));
  EXPECT_THAT(answer->at(other_driver).error, HasSubstr("no device of driver liken.sh"));
  EXPECT_THAT(answer->at(missing).error, HasSubstr("ResourceClaim ns/missing not found"));
  EXPECT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_EQ(plugin_->prepared_claims(), 1u);
}

TEST_P(KubeletPluginTest, SymlinkPlantedInCdiDirectoryIsReplacedNotFollowed) {
  const std::string target = dir_.path() + "/victim";
  WriteFile(target, "precious\n");
  ASSERT_EQ(::symlink(target.c_str(), SpecPath(kGpuUid).c_str()), 0);
  auto answer = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  auto victim = ReadFileToString(target);
  LIKEN_ASSERT_OK(victim);
  EXPECT_EQ(*victim, "precious\n");
  LIKEN_ASSERT_OK(kubelet_->Unprepare({Gpu()}));
  EXPECT_TRUE(Exists(target));
}

TEST_P(KubeletPluginTest, SymlinkedCdiDirectoryIsRefusedAndUnprepareRemovesNothingInItsTarget) {
  // The hostile layout: the CDI directory is a link to another directory holding a file named like a claim's spec.
  kubelet_.reset();
  plugin_.reset();
  const std::string target = dir_.path() + "/elsewhere";
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  const std::string planted = absl::StrCat(target, "/liken.sh-", kGpuUid, ".json");
  WriteFile(planted, "precious\n");
  std::filesystem::remove_all(cdi_root_);
  ASSERT_EQ(::symlink(target.c_str(), cdi_root_.c_str()), 0);
  StartPlugin();  // start-up's sweep of specs no record accounts for goes through the link: it removes nothing
  EXPECT_TRUE(Exists(planted));
  auto answer = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_THAT(answer->at(kGpuUid).error, HasSubstr("symlink")) << "prepare must refuse the linked directory";
  EXPECT_FALSE(Exists(RecordPath(kGpuUid)));
  for (int i = 0; i < 2; ++i) {  // no record: this driver never prepared the claim, so nothing is removed
    auto un = kubelet_->Unprepare({Gpu()});
    LIKEN_ASSERT_OK(un);
    EXPECT_EQ(un->at(kGpuUid), "");
  }
  auto victim = ReadFileToString(planted);
  LIKEN_ASSERT_OK(victim);
  EXPECT_EQ(*victim, "precious\n");
}

TEST_P(KubeletPluginTest, UnprepareOfAClaimWithoutARecordLeavesAFileNamedLikeItsSpec) {
  WriteFile(SpecPath(kGpuUid), "not ours\n");  // e.g. written by an operator or another tool
  auto un = kubelet_->Unprepare({Gpu()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kGpuUid), "");
  EXPECT_TRUE(Exists(SpecPath(kGpuUid)));
}

TEST_P(KubeletPluginTest, StalePrepareArrivingAfterUnprepareDoesNotResurrectTheClaim) {
  auto gate = lookup_.HoldNext("ns", "gpu");
  absl::StatusOr<std::map<std::string, ClaimAnswer>> stale;
  std::thread prepare([&] { stale = kubelet_->Prepare({Gpu()}); });
  gate->entered.WaitForNotification();  // the prepare reached the plugin and is reading the claim
  auto un = kubelet_->Unprepare({Gpu()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kGpuUid), "");
  gate->release.Notify();
  prepare.join();
  LIKEN_ASSERT_OK(stale);
  EXPECT_THAT(stale->at(kGpuUid).error, HasSubstr("unprepared after this prepare request arrived"));
  EXPECT_FALSE(Exists(SpecPath(kGpuUid)));
  EXPECT_FALSE(Exists(RecordPath(kGpuUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  // The kubelet asking again is a new request and is honored.
  auto fresh = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(fresh);
  EXPECT_EQ(fresh->at(kGpuUid).error, "");
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
}

TEST_P(KubeletPluginTest, UnprepareRebindsUsbInterfacesThatLostTheirDriver) {
  const std::string iface_dir = sysfs_root_ + "/bus/usb/devices/1-2:1.0";
  std::filesystem::create_directories(iface_dir);
  WriteFile(sysfs_root_ + "/bus/usb/drivers_probe", "");
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  // A libusb program detached the kernel driver: the interface has no `driver` link.
  auto un = kubelet_->Unprepare({Usb()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kUsbUid), "");
  auto probed = ReadFileToString(sysfs_root_ + "/bus/usb/drivers_probe");
  LIKEN_ASSERT_OK(probed);
  EXPECT_EQ(*probed, "1-2:1.0");
  EXPECT_EQ(observer_.rebind_failures.load(), 0);
}

// Admin access (DRAAdminAccess): a claim allocated the serial adapter for admin access while "serial" holds it gets
// the same nodes; its unprepare (also after a restart) leaves the interface's driver binding to the owner claim,
// whose program may have detached the kernel driver, and leaves the owner's spec alone.
TEST_P(KubeletPluginTest, AdminAccessClaimGetsTheSameNodesAndLeavesTheOwnersBindingAlone) {
  constexpr char kAdminUid[] = "9f8e7d6c-0000-4000-8000-00000000000a";
  const kubelet::ClaimRef admin{"admin-ns", kAdminUid, "serial-admin"};
  lookup_.Add(ClaimJson("admin-ns", "serial-admin", kAdminUid, kNode,
                        {{"port", "usb-1-2-1-0", "", "liken.sh", "", /*admin_access=*/true}}));
  std::filesystem::create_directories(sysfs_root_ + "/bus/usb/devices/1-2:1.0");  // no driver link: detached
  WriteFile(sysfs_root_ + "/bus/usb/drivers_probe", "");
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  auto answer = kubelet_->Prepare({admin});
  LIKEN_ASSERT_OK(answer);
  ASSERT_EQ(answer->at(kAdminUid).error, "");
  EXPECT_EQ(ReadSpecJson(kAdminUid)["devices"][0]["containerEdits"], ReadSpecJson(kUsbUid)["devices"][0]["containerEdits"])
      << "the same nodes as the owner's claim";
  RestartPlugin();
  auto un = kubelet_->Unprepare({admin});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kAdminUid), "");
  EXPECT_FALSE(Exists(SpecPath(kAdminUid)));
  auto probed = ReadFileToString(sysfs_root_ + "/bus/usb/drivers_probe");
  LIKEN_ASSERT_OK(probed);
  EXPECT_EQ(*probed, "") << "the admin claim's unprepare rebinds nothing";
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(UsbSerial().nodes)) << "the owner's spec is untouched";
  LIKEN_ASSERT_OK(kubelet_->Unprepare({Usb()}));
  probed = ReadFileToString(sysfs_root_ + "/bus/usb/drivers_probe");
  LIKEN_ASSERT_OK(probed);
  EXPECT_EQ(*probed, "1-2:1.0") << "the owner's unprepare rebinds";
}

// What a node pass asks for a pod to follow its device (nodestate::NodeDevices::HeldDevices): each device a prepared
// claim holds, as delivered (attributes and sysfs directory, also after a restart, from the records), and whether
// only admin-access claims hold it.
TEST_P(KubeletPluginTest, HeldDevicesAreThePreparedClaimsDevicesAsDelivered) {
  EXPECT_TRUE(plugin_->HeldDevices().empty());
  discovery::PublishedDevice serial = UsbSerial(sysfs_root_ + "/devices/usb1/1-2/1-2:1.0");
  serial.attributes["liken.sh/serial"] = std::string("A50285BI");
  std::filesystem::create_directories(serial.sysfs_path);
  scanner_.Set(InventoryOf({GpuRender(), GpuDisplay(), serial}));
  plugin_->UpdateInventory(InventoryOf({GpuRender(), GpuDisplay(), serial}));
  constexpr char kAdminUid[] = "9f8e7d6c-0000-4000-8000-00000000000b";
  const kubelet::ClaimRef admin{"admin-ns", kAdminUid, "serial-admin"};
  lookup_.Add(ClaimJson("admin-ns", "serial-admin", kAdminUid, kNode,
                        {{"port", "usb-1-2-1-0", "", "liken.sh", "", /*admin_access=*/true}}));
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  LIKEN_ASSERT_OK(kubelet_->Prepare({admin}));
  const nodestate::HeldDevice want{"usb-1-2-1-0", serial.attributes, serial.sysfs_path, false};
  EXPECT_EQ(plugin_->HeldDevices(), std::vector<nodestate::HeldDevice>{want});
  RestartPlugin();
  EXPECT_EQ(plugin_->HeldDevices(), std::vector<nodestate::HeldDevice>{want}) << "recovered from the records";
  LIKEN_ASSERT_OK(kubelet_->Unprepare({Usb()}));
  nodestate::HeldDevice admin_only = want;
  admin_only.admin_access_only = true;
  EXPECT_EQ(plugin_->HeldDevices(), std::vector<nodestate::HeldDevice>{admin_only});
  LIKEN_ASSERT_OK(kubelet_->Unprepare({admin}));
  EXPECT_TRUE(plugin_->HeldDevices().empty());
}

// What the claim status writer is told (nodestate::PreparedClaimEvents): each claim prepared, or recovered at
// start-up, with the devices of this node's pool and their delivered /dev nodes; each claim unprepared.
TEST_P(KubeletPluginTest, TellsTheClaimEventsOfEveryPreparedAndUnpreparedClaim) {
  tell_claim_events_ = true;
  RestartPlugin();
  std::vector<std::string> paths;
  for (const auto& node : UsbSerial().nodes) paths.push_back(node.path);
  const std::string prepared =
      absl::StrCat("prepared ns/serial ", kUsbUid, " usb-1-2-1-0=", absl::StrJoin(paths, ","));
  ASSERT_FALSE(paths.empty());
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  EXPECT_EQ(claim_events_.Take(), std::vector<std::string>{prepared});
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  EXPECT_EQ(claim_events_.Take(), std::vector<std::string>{}) << "prepared already: no change";
  RestartPlugin();
  EXPECT_EQ(claim_events_.Take(), std::vector<std::string>{prepared}) << "recovered from the records";
  LIKEN_ASSERT_OK(kubelet_->Unprepare({Usb()}));
  EXPECT_EQ(claim_events_.Take(), std::vector<std::string>{absl::StrCat("unprepared ns/serial ", kUsbUid)});
}

// Unprepare releases the claim's devices first, then tells the claim events (which ask for a node pass): the pass
// that event asks for must find the device no longer held, else a device that went away stays published tainted
// until the next resync. On the earlier order (told first, counted after) the hook saw usb-1-2-1-0 still held.
TEST_P(KubeletPluginTest, UnprepareReleasesTheDevicesBeforeItAsksForAPass) {
  tell_claim_events_ = true;
  claim_events_.OnUnprepared([this] {
    std::vector<std::string> held;
    for (const auto& d : plugin_->HeldDevices()) held.push_back(d.name);
    return absl::StrCat("held=[", absl::StrJoin(held, ","), "]");
  });
  RestartPlugin();
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  ASSERT_EQ(plugin_->HeldDevices().size(), 1u);
  (void)claim_events_.Take();
  LIKEN_ASSERT_OK(kubelet_->Unprepare({Usb()}));
  EXPECT_EQ(claim_events_.Take(), std::vector<std::string>{absl::StrCat("unprepared ns/serial ", kUsbUid, " held=[]")});
}

// What the node pass's claim-status step reads (nodestate::NodeDevices::PresentDevices): the names the catalog's
// inventory publishes; none before Start or before any scan.
TEST_P(KubeletPluginTest, PresentDevicesAreTheHeldInventorysNames) {
  {
    kubelet::KubeletPlugin idle(Options(), &scanner_, &lookup_, &observer_);
    EXPECT_EQ(idle.PresentDevices(), std::nullopt) << "not started";
  }
  std::set<std::string> names;
  for (const auto& d : inventory_.published) names.insert(d.name);
  EXPECT_EQ(plugin_->PresentDevices(), names);
  plugin_->UpdateInventory(InventoryOf({GpuRender()}));
  EXPECT_EQ(plugin_->PresentDevices(), std::set<std::string>{GpuRender().name});
}

TEST_P(KubeletPluginTest, UnprepareLeavesBoundInterfacesAlone) {
  const std::string iface_dir = sysfs_root_ + "/bus/usb/devices/1-2:1.0";
  std::filesystem::create_directories(iface_dir);
  ASSERT_EQ(::symlink("../../../bus/usb/drivers/ftdi_sio", (iface_dir + "/driver").c_str()), 0);
  WriteFile(sysfs_root_ + "/bus/usb/drivers_probe", "");
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  LIKEN_ASSERT_OK(kubelet_->Unprepare({Usb()}));
  auto probed = ReadFileToString(sysfs_root_ + "/bus/usb/drivers_probe");
  LIKEN_ASSERT_OK(probed);
  EXPECT_EQ(*probed, "");
}

TEST_P(KubeletPluginTest, FailedRebindIsCountedButNeverFailsTheUnprepare) {
  std::filesystem::create_directories(sysfs_root_ + "/bus/usb/devices/1-2:1.0");
  std::filesystem::create_directories(sysfs_root_ + "/bus/usb/drivers_probe");  // not writable as a file
  LIKEN_ASSERT_OK(kubelet_->Prepare({Usb()}));
  auto un = kubelet_->Unprepare({Usb()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kUsbUid), "");
  EXPECT_EQ(observer_.rebind_failures.load(), 1);
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
}

TEST_P(KubeletPluginTest, StopRemovesItsSocketsAndRestartClearsStaleOnes) {
  std::string reg = kubelet_->plugin().registration_socket;
  std::string dra = kubelet_->plugin().endpoint;
  kubelet_.reset();
  plugin_->Stop();
  EXPECT_FALSE(Exists(reg));
  EXPECT_FALSE(Exists(dra));
  plugin_.reset();
  // Something that is not a socket sits at the DRA socket path: it is not removed, and the plugin does not
  // start. (The gRPC server would unlink it itself: the check has to come first.)
  WriteFile(dra, "not a socket");
  {
    kubelet::KubeletPlugin blocked(Options(), &scanner_, &lookup_, &observer_);
    EXPECT_EQ(blocked.Start().code(), absl::StatusCode::kFailedPrecondition);
  }
  ASSERT_TRUE(Exists(dra));
  auto content = ReadFileToString(dra);
  LIKEN_ASSERT_OK(content);
  EXPECT_EQ(*content, "not a socket");
  ASSERT_EQ(::unlink(dra.c_str()), 0);
  // A crashed instance left its sockets behind.
  for (const std::string& path : {reg, dra}) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
    ::close(fd);
    ASSERT_TRUE(Exists(path));
  }
  StartPlugin();
  auto answer = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kGpuUid).error, "");
}

TEST_P(KubeletPluginTest, PodUidNamesTheSocketsForRollingUpdates) {
  kubelet_.reset();
  plugin_.reset();
  pod_uid_ = "0b3a8e52-1111-4222-8333-444455556666";
  StartPlugin();
  EXPECT_EQ(kubelet_->plugin().registration_socket,
            absl::StrCat(kubelet_root_, "/plugins_registry/liken.sh-", pod_uid_, "-reg.sock"));
  EXPECT_EQ(kubelet_->plugin().endpoint, absl::StrCat(kubelet_root_, "/plugins/liken.sh/dra-", pod_uid_, ".sock"));
  auto answer = kubelet_->Prepare({Gpu()});
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kGpuUid).error, "");
}

// ---- files that are not what they should be, leftovers, vanished directories, a second driver process ----

std::string ClaimsDir(const std::string& kubelet_root) { return kubelet_root + "/plugins/liken.sh/claims"; }

TEST_P(KubeletPluginTest, FifosInTheClaimsAndCdiDirectoriesDoNotStopStartUp) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  kubelet_.reset();
  plugin_.reset();
  ASSERT_EQ(::mkfifo(RecordPath(kUsbUid).c_str(), 0644), 0);
  ASSERT_EQ(::mkfifo(SpecPath(kUsbUid).c_str(), 0644), 0);
  ::alarm(120);  // a watchdog, not a timed assertion: a blocking open of a FIFO hangs start-up forever
  StartPlugin();
  ::alarm(0);
  EXPECT_EQ(plugin_->prepared_claims(), 1u);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  // The kubelet's unprepare of that claim removes both.
  auto un = kubelet_->Unprepare({Usb()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kUsbUid), "");
  EXPECT_FALSE(Exists(RecordPath(kUsbUid)));
  EXPECT_FALSE(Exists(SpecPath(kUsbUid)));
}

TEST_P(KubeletPluginTest, StartUpRemovesTempFilesACrashLeftBehind) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  kubelet_.reset();
  plugin_.reset();
  const std::string record_temp = absl::StrCat(ClaimsDir(kubelet_root_), "/.", kGpuUid, ".json.tmp.1.5eed");
  const std::string spec_temp = absl::StrCat(cdi_root_, "/.liken.sh-", kUsbUid, ".json.tmp.1.5eed");
  const std::string other_driver = cdi_root_ + "/.vendor.com-gpu.json.tmp.1.5eed";
  WriteFile(record_temp, "{\"version\":1,");
  WriteFile(spec_temp, "{");
  WriteFile(other_driver, "{");
  StartPlugin();
  EXPECT_FALSE(Exists(record_temp));
  EXPECT_FALSE(Exists(spec_temp));
  EXPECT_TRUE(Exists(other_driver)) << "another driver's file was removed";
  EXPECT_EQ(plugin_->prepared_claims(), 1u);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
}

// A call's records are written as temp files, flushed together, then renamed: a crash between the two leaves
// complete temp files and no record. The kubelet got no answer and retries; nothing may count as prepared.
TEST_P(KubeletPluginTest, CrashBetweenTheBatchWriteAndItsRenamesLosesNothing) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  kubelet_.reset();
  plugin_.reset();
  std::vector<std::string> temps;
  for (const std::string& uid : {std::string(kGpuUid), std::string(kUsbUid)}) {
    auto record = ReadFileToString(RecordPath(uid));
    LIKEN_ASSERT_OK(record);
    temps.push_back(absl::StrCat(ClaimsDir(kubelet_root_), "/.", uid, ".json.tmp.1.ba7c4"));
    WriteFile(temps.back(), *record);  // the batch written, not yet renamed
    ASSERT_EQ(::unlink(RecordPath(uid).c_str()), 0);
    ASSERT_EQ(::unlink(SpecPath(uid).c_str()), 0);  // specs come after the renames
  }
  StartPlugin();
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
  for (const auto& temp : temps) EXPECT_FALSE(Exists(temp)) << temp;
  auto retried = kubelet_->Prepare({Gpu(), Usb()});
  LIKEN_ASSERT_OK(retried);
  EXPECT_EQ(retried->at(kGpuUid).error, "");
  EXPECT_EQ(retried->at(kUsbUid).error, "");
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  EXPECT_TRUE(Exists(RecordPath(kUsbUid)));
  RestartPlugin();  // and a restart after the retried call keeps both
  EXPECT_EQ(plugin_->prepared_claims(), 2u);
}

TEST_P(KubeletPluginTest, UnpreparingTheLastClaimRemovesTempFilesACrashLeftBehind) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  const std::string record_temp = absl::StrCat(ClaimsDir(kubelet_root_), "/.", kGpuUid, ".json.tmp.7.abc");
  const std::string spec_temp = absl::StrCat(cdi_root_, "/.liken.sh-", kGpuUid, ".json.tmp.7.abc");
  const std::string other_driver = cdi_root_ + "/.vendor.com-gpu.json.tmp.7.abc";
  WriteFile(record_temp, "{");
  WriteFile(spec_temp, "{");
  WriteFile(other_driver, "{");
  auto un = kubelet_->Unprepare({Gpu()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kGpuUid), "");
  un = kubelet_->Unprepare({Usb()});
  LIKEN_ASSERT_OK(un);
  EXPECT_EQ(un->at(kUsbUid), "");
  EXPECT_FALSE(Exists(record_temp));
  EXPECT_FALSE(Exists(spec_temp));
  EXPECT_TRUE(Exists(other_driver)) << "another driver's file was removed";
}

TEST_P(KubeletPluginTest, DeletedCdiDirectoryIsRecreatedByPrepareAndByTheNextRefresh) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  std::filesystem::remove_all(cdi_root_);
  auto fresh = kubelet_->Prepare({Usb()});
  LIKEN_ASSERT_OK(fresh);
  EXPECT_EQ(fresh->at(kUsbUid).error, "") << "a prepare after the CDI directory vanished failed";
  EXPECT_TRUE(Exists(SpecPath(kUsbUid)));
  std::filesystem::remove_all(cdi_root_);
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 2);
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(UsbSerial().nodes));
  EXPECT_EQ(plugin_->prepared_claims(), 2u);
}

TEST_P(KubeletPluginTest, DeletedClaimsDirectoryIsRecreatedWithThePreparedClaimsRecords) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu(), Usb()}));
  std::filesystem::remove_all(ClaimsDir(kubelet_root_));
  auto refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(plugin_->prepared_claims(), 2u) << "a lost directory was taken for unprepares elsewhere";
  EXPECT_TRUE(Exists(RecordPath(kGpuUid)));
  EXPECT_TRUE(Exists(RecordPath(kUsbUid)));
  EXPECT_EQ(ReadSpecJson(kGpuUid), ExpectedGpuSpec());
  RestartPlugin();
  EXPECT_EQ(plugin_->prepared_claims(), 2u) << "a restart lost the claims";
  // Both directories at once.
  std::filesystem::remove_all(ClaimsDir(kubelet_root_));
  std::filesystem::remove_all(cdi_root_);
  refreshed = plugin_->RefreshPreparedClaims(inventory_);
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_EQ(*refreshed, 2);
  EXPECT_TRUE(Exists(RecordPath(kGpuUid)));
  EXPECT_EQ(ReadSpecJson(kUsbUid), ExpectedUsbSpec(UsbSerial().nodes));
}

// True once /proc/locks lists a process waiting for a flock on the inode `ino`; false when `gave_up` turns
// true first.
bool WaitForFlockWaiter(ino_t ino, const std::atomic<bool>& gave_up) {
  const std::string inode = absl::StrCat(":", ino, " ");
  while (!gave_up.load()) {
    std::ifstream locks("/proc/locks");
    std::string line;
    while (std::getline(locks, line)) {
      if (line.find("-> FLOCK") != std::string::npos && line.find(inode) != std::string::npos) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Two driver processes of a rolling update share the directories. The other one unprepares the GPU claim
// (spec removed, then record) holding the claims directory's lock; this one's reconcile pass, finding the
// spec gone, waits for the lock before it checks the record, so it forgets the claim instead of rewriting
// its spec after the record is gone.
TEST_P(KubeletPluginTest, RefreshWaitsForTheOtherDriverProcessHoldingTheClaimsLock) {
  LIKEN_ASSERT_OK(kubelet_->Prepare({Gpu()}));
  const std::string claims_dir = ClaimsDir(kubelet_root_);
  const std::string record = RecordPath(kGpuUid);
  struct stat dir_stat;
  ASSERT_EQ(::stat(claims_dir.c_str(), &dir_stat), 0);
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the other driver process: only async-signal-safe calls
    ::close(to_child[1]);
    ::close(from_child[0]);
    int fd = ::open(claims_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(3);
    if (::unlink(SpecPath(kGpuUid).c_str()) != 0) ::_exit(4);
    char c = 'L';
    if (::write(from_child[1], &c, 1) != 1) ::_exit(5);
    if (::read(to_child[0], &c, 1) != 1) ::_exit(6);  // go on
    if (::unlink(record.c_str()) != 0) ::_exit(7);
    ::_exit(0);  // exiting closes fd and releases the lock
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  char c = 0;
  ASSERT_EQ(::read(from_child[0], &c, 1), 1) << "the other process did not take the lock";
  std::atomic<bool> refresh_done{false};
  absl::StatusOr<int> refreshed = 0;
  std::thread refresh([&] {
    refreshed = plugin_->RefreshPreparedClaims(inventory_);
    refresh_done.store(true);
  });
  const bool waited = WaitForFlockWaiter(dir_stat.st_ino, refresh_done);
  c = 'G';
  ASSERT_EQ(::write(to_child[1], &c, 1), 1);
  refresh.join();
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ::close(to_child[1]);
  ::close(from_child[0]);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "other process status " << wstatus;
  EXPECT_TRUE(waited) << "the refresh acted without waiting for the other process's lock";
  LIKEN_ASSERT_OK(refreshed);
  EXPECT_FALSE(Exists(SpecPath(kGpuUid))) << "the spec of a claim the other process unprepared was rewritten";
  EXPECT_FALSE(Exists(record));
  EXPECT_EQ(plugin_->prepared_claims(), 0u);
}

// The same protocol the other way: while this process prepares a claim (record, then spec), the other one
// sees both files or neither.
TEST_P(KubeletPluginTest, PrepareWritesRecordAndSpecUnderTheClaimsLock) {
  const std::string claims_dir = ClaimsDir(kubelet_root_);
  struct stat dir_stat;
  ASSERT_EQ(::stat(claims_dir.c_str(), &dir_stat), 0);
  int fd = ::open(claims_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // taken through its own open file: excludes this process's writers too
  std::atomic<bool> prepare_done{false};
  absl::StatusOr<std::map<std::string, ClaimAnswer>> answer;
  std::thread prepare([&] {
    answer = kubelet_->Prepare({Gpu()});
    prepare_done.store(true);
  });
  const bool waited = WaitForFlockWaiter(dir_stat.st_ino, prepare_done);
  const bool record_while_locked = Exists(RecordPath(kGpuUid));
  const bool spec_while_locked = Exists(SpecPath(kGpuUid));
  ::close(fd);
  prepare.join();
  EXPECT_TRUE(waited) << "the prepare wrote without taking the lock";
  EXPECT_FALSE(record_while_locked);
  EXPECT_FALSE(spec_while_locked);
  LIKEN_ASSERT_OK(answer);
  EXPECT_EQ(answer->at(kGpuUid).error, "");
  EXPECT_TRUE(Exists(RecordPath(kGpuUid)));
  EXPECT_TRUE(Exists(SpecPath(kGpuUid)));
}

INSTANTIATE_TEST_SUITE_P(Versions, KubeletPluginTest, ::testing::Values(DraVersion::kV1, DraVersion::kV1beta1),
                         [](const auto& info) { return info.param == DraVersion::kV1 ? "v1" : "v1beta1"; });

}  // namespace
}  // namespace liken::testing
