#include "kubelet/runtime_cdi.h"

#include <grpcpp/grpcpp.h>

#include <atomic>

#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "kubelet/proto/cri_v1.grpc.pb.h"
#include "test/kubelet/test_support.h"

namespace liken::kubelet {
namespace {

using testing::TempDir;

// containerd's verbose Status carries its CRI configuration as JSON under "config" (the plugin's settings at the
// top level, as 1.7 marshals them).
std::map<std::string, std::string> ContainerdInfo(const std::string& cdi_fields) {
  return {{"config", absl::StrCat(R"({"containerd":{"snapshotter":"overlayfs","defaultRuntimeName":"runc"},)",
                                  R"("cni":{"binDir":"/opt/cni/bin","confDir":"/etc/cni/net.d"},)", cdi_fields,
                                  R"("containerdRootDir":"/var/lib/containerd"})")},
          {"lastCNILoadStatus", "OK"}};
}

TEST(JudgeRuntimeCdiTest, ContainerdSaysWhatItsConfigurationSays) {
  RuntimeCdi on = JudgeRuntimeCdi("containerd", "v1.7.27",
                                  ContainerdInfo(R"("enableCDI":true,"cdiSpecDirs":["/etc/cdi","/var/run/cdi"],)"));
  EXPECT_EQ(on.state, RuntimeCdiState::kEnabled);
  EXPECT_EQ(on.runtime, "containerd v1.7.27");
  RuntimeCdi off = JudgeRuntimeCdi("containerd", "v1.7.27",
                                   ContainerdInfo(R"("enableCDI":false,"cdiSpecDirs":["/etc/cdi","/var/run/cdi"],)"));
  EXPECT_EQ(off.state, RuntimeCdiState::kDisabled);
  EXPECT_NE(off.reason.find("enable_cdi = true"), std::string::npos) << off.reason;
  // 2.x turned off explicitly is off too.
  EXPECT_EQ(JudgeRuntimeCdi("containerd", "v2.1.4", ContainerdInfo(R"("enableCDI":false,)")).state,
            RuntimeCdiState::kDisabled);
}

TEST(JudgeRuntimeCdiTest, ContainerdWithoutTheSettingIsJudgedByVersion) {
  // 1.6 has no CDI and no such setting.
  RuntimeCdi old = JudgeRuntimeCdi("containerd", "1.6.20~ds1", ContainerdInfo(""));
  EXPECT_EQ(old.state, RuntimeCdiState::kDisabled);
  EXPECT_NE(old.reason.find("before 1.7"), std::string::npos) << old.reason;
  EXPECT_EQ(JudgeRuntimeCdi("containerd", "v2.4.2", ContainerdInfo("")).state, RuntimeCdiState::kEnabled);
  // 1.7 always writes the setting: without it (no verbose info) nothing can be said.
  EXPECT_EQ(JudgeRuntimeCdi("containerd", "v1.7.27", {}).state, RuntimeCdiState::kUnknown);
  EXPECT_EQ(JudgeRuntimeCdi("containerd", "v1.7.27", {{"config", "not json"}}).state, RuntimeCdiState::kUnknown);
}

// CDI on is not enough: the runtime must read specs from the driver's --cdi-root. containerd's status shows its
// cdi_spec_dirs as cdiSpecDirs (1.7 and 2.x marshal the CRI configuration so); the default is /etc/cdi and
// /var/run/cdi. Before, each of these said "enabled" while every pod with a claim failed.
TEST(JudgeRuntimeCdiTest, TheRuntimesCdiSpecDirsMustHoldTheCdiRoot) {
  const auto containerd = [](const std::string& dirs, const std::string& cdi_root) {
    return JudgeRuntimeCdi("containerd", "v1.7.27",
                           ContainerdInfo(absl::StrCat(R"("enableCDI":true,)", dirs)), {.cdi_root = cdi_root});
  };
  RuntimeCdi elsewhere = containerd(R"("cdiSpecDirs":["/etc/cdi"],)", "/var/run/cdi");
  EXPECT_EQ(elsewhere.state, RuntimeCdiState::kOutsideSpecDirs);
  EXPECT_EQ(elsewhere.spec_dirs, std::vector<std::string>{"/etc/cdi"});
  EXPECT_EQ(elsewhere.reason,
            "its CRI configuration has enable_cdi on; but it reads CDI specs from /etc/cdi, not from the driver's "
            "--cdi-root /var/run/cdi: every pod with a claim fails with 'unresolvable CDI devices'. Add /var/run/cdi "
            "to cdi_spec_dirs in its CRI plugin section and restart the runtime, or set the chart's cdiRoot to one of "
            "them");
  EXPECT_STREQ(RuntimeCdiStateName(elsewhere.state), "outside_spec_dirs");
  // A --cdi-root the default directories do not hold.
  RuntimeCdi custom_root = containerd("", "/opt/liken/cdi");
  EXPECT_EQ(custom_root.state, RuntimeCdiState::kOutsideSpecDirs);
  EXPECT_NE(custom_root.reason.find("from /etc/cdi, /var/run/cdi (its default: its status does not show cdi_spec_dirs"),
            std::string::npos)
      << custom_root.reason;
  // Held: the default, a configured list, /run for /var/run, a trailing '/'.
  EXPECT_EQ(containerd("", "/var/run/cdi").state, RuntimeCdiState::kEnabled);
  EXPECT_EQ(containerd(R"("cdiSpecDirs":["/etc/cdi","/opt/liken/cdi/"],)", "/opt/liken/cdi").state,
            RuntimeCdiState::kEnabled);
  RuntimeCdi run = containerd(R"("cdiSpecDirs":["/run/cdi"],)", "/var/run/cdi");
  EXPECT_EQ(run.state, RuntimeCdiState::kEnabled);
  EXPECT_EQ(run.reason, "its CRI configuration has enable_cdi on; it reads CDI specs from /run/cdi, the driver's "
                        "--cdi-root among them");
  // containerd 2.x, on by default, with its directories elsewhere.
  EXPECT_EQ(JudgeRuntimeCdi("containerd", "v2.1.4", ContainerdInfo(R"("cdiSpecDirs":["/etc/cdi"],)"),
                            {.cdi_root = "/var/run/cdi"})
                .state,
            RuntimeCdiState::kOutsideSpecDirs);
  // CDI off stays off, whatever the directories.
  EXPECT_EQ(JudgeRuntimeCdi("containerd", "v1.7.27", ContainerdInfo(R"("enableCDI":false,"cdiSpecDirs":["/etc/cdi"],)")).state,
            RuntimeCdiState::kDisabled);
  // CRI-O: its cdi_spec_dirs where a status value shows them, else its default.
  EXPECT_EQ(JudgeRuntimeCdi("cri-o", "1.33.2", {{"config", R"({"crio":{"runtime":{"cdi_spec_dirs":["/etc/cdi"]}}})"}},
                            {.cdi_root = "/var/run/cdi"})
                .state,
            RuntimeCdiState::kOutsideSpecDirs);
  EXPECT_EQ(JudgeRuntimeCdi("cri-o", "1.33.2", {}, {.cdi_root = "/var/run/cdi"}).state, RuntimeCdiState::kEnabled);
}

TEST(JudgeRuntimeCdiTest, CriOAndOthers) {
  EXPECT_EQ(JudgeRuntimeCdi("cri-o", "1.33.2", {}).state, RuntimeCdiState::kEnabled);
  EXPECT_EQ(JudgeRuntimeCdi("cri-o", "1.22.0", {}).state, RuntimeCdiState::kUnknown);
  EXPECT_EQ(JudgeRuntimeCdi("docker", "28.0.1", {}).state, RuntimeCdiState::kUnknown);
  EXPECT_STREQ(RuntimeCdiStateName(RuntimeCdiState::kDisabled), "disabled");
  EXPECT_STREQ(RuntimeCdiStateName(RuntimeCdiState::kEnabled), "enabled");
  EXPECT_STREQ(RuntimeCdiStateName(RuntimeCdiState::kUnknown), "unknown");
}

// A runtime's CRI service answering Version and Status as containerd 1.7 with CDI off does.
class FakeRuntime final : public runtime::v1::RuntimeService::Service {
 public:
  grpc::Status Version(grpc::ServerContext*, const runtime::v1::VersionRequest*,
                       runtime::v1::VersionResponse* response) override {
    response->set_version("0.1.0");
    response->set_runtime_name("containerd");
    response->set_runtime_version("v1.7.27");
    response->set_runtime_api_version("v1");
    return grpc::Status::OK;
  }
  grpc::Status Status(grpc::ServerContext*, const runtime::v1::StatusRequest* request,
                      runtime::v1::StatusResponse* response) override {
    verbose_asked.store(request->verbose());
    if (request->verbose()) {
      for (const auto& [k, v] : ContainerdInfo(R"("enableCDI":false,)")) (*response->mutable_info())[k] = v;
    }
    return grpc::Status::OK;
  }
  // Written on the server's handler thread, read by the test after the call returns.
  std::atomic<bool> verbose_asked{false};
};

TEST(CheckRuntimeCdiTest, AsksTheRuntimeOverItsSocket) {
  TempDir dir;
  const std::string socket = dir.path() + "/cri.sock";
  FakeRuntime runtime;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&runtime);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto cdi = CheckRuntimeCdi("unix://" + socket, absl::Seconds(10));
  LIKEN_ASSERT_OK(cdi);
  EXPECT_TRUE(runtime.verbose_asked.load());
  EXPECT_EQ(cdi->state, RuntimeCdiState::kDisabled);
  EXPECT_EQ(cdi->runtime, "containerd v1.7.27");
  // A bare path works the same.
  auto again = CheckRuntimeCdi(socket, absl::Seconds(10));
  LIKEN_ASSERT_OK(again);
  EXPECT_EQ(again->state, RuntimeCdiState::kDisabled);
  server->Shutdown();
}

TEST(CheckRuntimeCdiTest, NoRuntimeIsUnavailableNamingTheEndpoint) {
  TempDir dir;
  auto cdi = CheckRuntimeCdi(dir.path() + "/none.sock", absl::Seconds(2));
  ASSERT_FALSE(cdi.ok());
  EXPECT_TRUE(absl::IsUnavailable(cdi.status())) << cdi.status();
  EXPECT_NE(cdi.status().message().find("none.sock"), std::string::npos) << cdi.status();
}

}  // namespace
}  // namespace liken::kubelet
