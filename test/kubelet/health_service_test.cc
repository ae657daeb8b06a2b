// The DRAResourceHealth streams (v1 and v1alpha1) over the plugin's DRA socket.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kubelet/kubelet_plugin.h"
#include "kubelet/proto/health_v1.grpc.pb.h"
#include "kubelet/proto/health_v1alpha1.grpc.pb.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/fake_scanner.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::testing {
namespace {

constexpr char kNode[] = "node-h";
constexpr char kUsbUid[] = "a0000000-0000-4000-8000-0000000000c1";

struct Health {
  std::string device;
  std::string pool;
  int health;  // 1 healthy, 2 unhealthy
  std::string message;
  int64_t timeout;
  bool operator==(const Health&) const = default;
};

// Reads the next list from either version's stream.
template <typename Reader, typename Response>
std::vector<Health> Next(Reader& reader) {
  Response resp;
  if (!reader.Read(&resp)) return {};
  std::vector<Health> out;
  for (const auto& d : resp.devices()) {
    EXPECT_GT(d.last_updated_time(), 0);
    out.push_back({d.device().device_name(), d.device().pool_name(), static_cast<int>(d.health()), d.message(),
                   d.health_check_timeout_seconds()});
  }
  return out;
}

class HealthServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path() + "/boot_id") << "boot\n";
    kubelet::KubeletPluginOptions o;
    o.node_name = kNode;
    o.kubelet_root = dir_.path() + "/kubelet";
    o.cdi_root = dir_.path() + "/cdi";
    o.sysfs_root = dir_.path() + "/sys";
    o.boot_id_path = dir_.path() + "/boot_id";
    o.health_timeout = absl::Seconds(90);
    o.shutdown_grace = absl::Seconds(2);
    scanner_.Set(InventoryOf({GpuRender(), UsbSerial()}));
    lookup_.Add(ClaimJson("ns", "serial", kUsbUid, kNode, {{"port", "usb-1-2-1-0"}}));
    plugin_ = std::make_unique<kubelet::KubeletPlugin>(o, &scanner_, &lookup_, nullptr);
    LIKEN_ASSERT_OK(plugin_->Start());
    plugin_->UpdateInventory(InventoryOf({GpuRender(), UsbSerial()}));
    auto k = TestKubelet::Register(o.kubelet_root, DraVersion::kV1);
    LIKEN_ASSERT_OK(k);
    kubelet_ = std::move(*k);
  }

  void TearDown() override {
    kubelet_.reset();
    plugin_.reset();
  }

  // Walks one stream version through: all healthy, then the prepared adapter unplugged.
  template <typename Stub, typename Request, typename Response>
  void CheckStream() {
    auto stub = Stub::NewStub(kubelet_->channel());
    grpc::ClientContext ctx;
    auto reader = stub->NodeWatchResources(&ctx, Request());
    EXPECT_EQ((Next<decltype(*reader), Response>(*reader)),
              (std::vector<Health>{{"pci-0000-00-02-0", kNode, 1, "", 90}, {"usb-1-2-1-0", kNode, 1, "", 90}}));
    auto answer = kubelet_->Prepare({{"ns", kUsbUid, "serial"}});
    LIKEN_ASSERT_OK(answer);
    ASSERT_EQ(answer->at(kUsbUid).error, "");
    plugin_->UpdateInventory(InventoryOf({GpuRender()}));  // the reconcile loop no longer finds the adapter
    auto after = Next<decltype(*reader), Response>(*reader);
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[0], (Health{"pci-0000-00-02-0", kNode, 1, "", 90}));
    EXPECT_EQ(after[1].device, "usb-1-2-1-0");
    EXPECT_EQ(after[1].health, 2);
    EXPECT_THAT(after[1].message, ::testing::HasSubstr("no longer present"));
    ctx.TryCancel();
  }

  TempDir dir_;
  FakeScanner scanner_;
  FakeClaimLookup lookup_;
  std::unique_ptr<kubelet::KubeletPlugin> plugin_;
  std::unique_ptr<TestKubelet> kubelet_;
};

TEST_F(HealthServiceTest, V1StreamsHealthyDevicesThenAnUnpluggedPreparedDevice) {
  CheckStream<::v1::DRAResourceHealth, ::v1::NodeWatchResourcesRequest, ::v1::NodeWatchResourcesResponse>();
}

TEST_F(HealthServiceTest, V1alpha1StreamsTheSame) {
  CheckStream<::v1alpha1::DRAResourceHealth, ::v1alpha1::NodeWatchResourcesRequest,
              ::v1alpha1::NodeWatchResourcesResponse>();
}

TEST_F(HealthServiceTest, StopEndsOpenStreams) {
  auto stub = ::v1::DRAResourceHealth::NewStub(kubelet_->channel());
  grpc::ClientContext ctx;
  auto reader = stub->NodeWatchResources(&ctx, ::v1::NodeWatchResourcesRequest());
  ::v1::NodeWatchResourcesResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  plugin_->Stop();
  while (reader->Read(&resp)) {
  }
  grpc::Status s = reader->Finish();
  EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::CANCELLED ||
              s.error_code() == grpc::StatusCode::UNAVAILABLE)
      << s.error_message();
}

}  // namespace
}  // namespace liken::testing
