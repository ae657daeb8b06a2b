// The real `liken-dra run` and SIGTERM: in every state (start-up with recovery, a list or watch in flight,
// a slice write or a prepare in flight, an API server that accepts and never answers, one that is gone, a metrics
// port another process holds) the process
// exits within the 5 s budget; configuration that can never work ends it by itself with a clear error.
// The binary comes from $LIKEN_DRA. Waits for states are bounded and say what they waited for.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "informers/kube_client.h"
#include "test/common/taken_port.h"
#include "test/informers/fake_api_server.h"
#include "test/kubelet/test_kubelet.h"

namespace liken {
namespace {

using liken::testing::FakeApiServer;
using liken::testing::HttpRequest;
using liken::testing::HttpResponder;
using liken::testing::TakenPort;
using Clock = std::chrono::steady_clock;

// The budget for SIGTERM to process exit.
constexpr auto kShutdownBudget = std::chrono::seconds(5);
// How long a test waits for the daemon to reach a state (a bound for a broken daemon, not a speed goal).
constexpr auto kReachState = std::chrono::seconds(60);

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The names in `dir` (none when it cannot be read).
std::vector<std::string> ListDirectoryNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.push_back(e.path().filename());
  return names;
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = kReachState) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A port on loopback that nobody listens on (bound, then closed).
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class RunShutdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("LIKEN_DRA");
    ASSERT_NE(bin, nullptr) << "LIKEN_DRA names the liken-dra binary";
    bin_ = bin;
    char tmpl[] = "/tmp/liken-run-shutdown-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    for (const char* sub : {"/sys", "/sys/devices", "/dev", "/kubelet", "/cdi"}) ::mkdir((dir_ + sub).c_str(), 0755);
    server_.Upsert("nodes", {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "node-a"}}}});
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      std::fprintf(stderr, "--- daemon log\n%s\n", ReadAll(log_).c_str());
    }
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }

  // Writes a kubeconfig for `server` (plus `extra_cluster` and `user` YAML) and returns its path.
  std::string Kubeconfig(const std::string& server, const std::string& extra_cluster = "",
                         const std::string& user = "token: t") {
    std::string path = dir_ + "/kubeconfig";
    std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                        << "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                        << "clusters: [{name: k, cluster: {server: \"" << server << "\"" << extra_cluster << "}}]\n"
                        << "users: [{name: u, user: {" << user << "}}]\n";
    return path;
  }

  void Start(const std::string& kubeconfig, const std::string& metrics_address = "") {
    log_ = dir_ + "/daemon.log";
    std::vector<std::string> args = {bin_,         "run",
                                     "--node-name", "node-a",
                                     "--kubeconfig", kubeconfig,
                                     "--kubelet-root", dir_ + "/kubelet",
                                     "--cdi-root",  dir_ + "/cdi",
                                     "--sysfs-root", dir_ + "/sys",
                                     "--dev-root",  dir_ + "/dev",
                                     "--metrics-address=" + metrics_address, "--no-uevents", "--resync-period", "1h"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fd);
  }

  std::string DraSocket() const { return dir_ + "/kubelet/plugins/liken.sh/dra.sock"; }
  bool Exists(const std::string& path) const {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }
  bool Logged(const std::string& text) const { return ReadAll(log_).find(text) != std::string::npos; }

  // Waits for the daemon to exit by itself (up to `limit`); returns its wait status, or -1.
  int WaitForExit(std::chrono::milliseconds limit) {
    int status = 0;
    bool exited = WaitUntil([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, limit);
    if (!exited) return -1;
    pid_ = -1;
    return status;
  }

  // Sends SIGTERM and checks the process exits cleanly within the budget.
  void TerminateWithinBudget() {
    const auto sent = Clock::now();
    ASSERT_EQ(::kill(pid_, SIGTERM), 0);
    int status = WaitForExit(std::chrono::seconds(30));
    const auto took = Clock::now() - sent;
    ASSERT_NE(status, -1) << "still running 30 s after SIGTERM";
    EXPECT_LT(took, kShutdownBudget) << "SIGTERM to exit took "
                                     << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
    EXPECT_FALSE(Exists(DraSocket())) << "the DRA socket is removed";
    std::printf("SIGTERM to exit: %lld ms\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  }

  std::string bin_;
  std::string dir_;
  std::string log_;
  pid_t pid_ = -1;
  FakeApiServer server_;
};

TEST_F(RunShutdownTest, AListInFlightToAServerThatNeverAnswers) {
  server_.SetInterceptor(FakeApiServer::NeverAnswer());
  Start(Kubeconfig(server_.url()));
  ASSERT_TRUE(WaitUntil([&] {
    return Exists(DraSocket()) && server_.CountRequests(informers::ResourceSlicesPath(), false) > 0 &&
           server_.CountRequests(informers::PodsPath(), false) > 0;
  })) << "never listed";
  TerminateWithinBudget();
}

TEST_F(RunShutdownTest, TheApiServerIsGone) {
  Start(Kubeconfig(absl::StrCat("http://127.0.0.1:", ClosedPort())));
  ASSERT_TRUE(WaitUntil([&] { return Exists(DraSocket()) && Logged("list failed"); })) << "never failed a list";
  TerminateWithinBudget();
}

TEST_F(RunShutdownTest, WatchesInFlight) {
  Start(Kubeconfig(server_.url()));
  ASSERT_TRUE(WaitUntil([&] { return server_.OpenWatches() == 2 && Logged("msg=running"); })) << "never watched";
  TerminateWithinBudget();
}

TEST_F(RunShutdownTest, ASliceWriteThatIsNeverAnswered) {
  server_.SetInterceptor([](const HttpRequest& req, HttpResponder&) { return req.method == "POST"; });
  Start(Kubeconfig(server_.url()));
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& r : server_.Requests()) {
      if (r.method == "POST") return true;
    }
    return false;
  })) << "never wrote a slice";
  TerminateWithinBudget();
}

TEST_F(RunShutdownTest, StartUpWithCheckpointedClaimsAndAHangingServer) {
  server_.SetInterceptor(FakeApiServer::NeverAnswer());
  std::string boot_id = ReadAll("/proc/sys/kernel/random/boot_id");
  while (!boot_id.empty() && boot_id.back() == '\n') boot_id.pop_back();
  const std::string claims = dir_ + "/kubelet/plugins/liken.sh/claims";
  for (const char* d : {"/kubelet/plugins", "/kubelet/plugins/liken.sh", "/kubelet/plugins/liken.sh/claims"}) {
    ::mkdir((dir_ + d).c_str(), 0755);
  }
  for (int i = 0; i < 50; ++i) {  // their CDI specs are missing: recovery writes each (with fsync)
    std::string uid = absl::StrCat("00000000-0000-0000-0000-", 100000000000 + i);
    nlohmann::json record = {{"version", 1},
                             {"bootID", boot_id},
                             {"claim", {{"namespace", "ns1"}, {"name", absl::StrCat("claim-", i)}, {"uid", uid}}},
                             {"results", nlohmann::json::array()},
                             {"delivered", nlohmann::json::array()}};
    std::ofstream(claims + "/" + uid + ".json") << record.dump();
  }
  Start(Kubeconfig(server_.url()));
  ASSERT_TRUE(WaitUntil([&] { return Logged("msg=starting"); })) << "never started";
  TerminateWithinBudget();
}

TEST_F(RunShutdownTest, SigtermDuringTheRecoveryOfFiveThousandClaims) {
  std::string boot_id = ReadAll("/proc/sys/kernel/random/boot_id");
  while (!boot_id.empty() && boot_id.back() == '\n') boot_id.pop_back();
  const std::string claims = dir_ + "/kubelet/plugins/liken.sh/claims";
  for (const char* d : {"/kubelet/plugins", "/kubelet/plugins/liken.sh", "/kubelet/plugins/liken.sh/claims"}) {
    ::mkdir((dir_ + d).c_str(), 0755);
  }
  // 5,000 claims of this boot whose CDI specs are missing, each with a device and its metadata file: recovery
  // writes a spec and a metadata file for every one of them.
  constexpr int kClaims = 5000;
  for (int i = 0; i < kClaims; ++i) {
    std::string uid = absl::StrCat("00000000-0000-4000-8000-", 100000000000 + i);
    nlohmann::json node = {{"path", "/dev/dri/renderD128"}, {"type", "c"}, {"major", 226}, {"minor", 128},
                           {"subsystem", "drm"}};
    nlohmann::json record = {
        {"version", 1},
        {"bootID", boot_id},
        {"claim", {{"namespace", "ns1"}, {"name", absl::StrCat("claim-", i)}, {"uid", uid}}},
        {"results", {{{"requestNames", {"gpu"}}, {"pool", "node-a"}, {"device", "pci-0000-00-02-0"},
                      {"cdiDeviceIDs", {absl::StrCat("liken.sh/device=", uid, "-pci-0000-00-02-0")}}}}},
        {"delivered", {{{"name", "pci-0000-00-02-0"}, {"nodes", {node}}, {"usbInterfaces", nlohmann::json::array()},
                        {"sysfsPath", "/sys/devices/pci0000:00/0000:00:02.0"}}}}};
    std::ofstream(claims + "/" + uid + ".json") << record.dump();
  }
  Start(Kubeconfig(server_.url()));
  ASSERT_TRUE(WaitUntil([&] { return Logged("msg=starting"); }, std::chrono::seconds(60))) << "never started";
  TerminateWithinBudget();
  // Whether the signal came while the claims were still being recovered: then the rest were left for the next start.
  const bool cancelled = Logged("start-up recovery was cancelled");
  const bool recovered = Logged("kubelet plugin recovered prepared claims");
  EXPECT_TRUE(cancelled || recovered) << "neither recovered nor cancelled";
  auto specs = ListDirectoryNames(dir_ + "/cdi");
  std::printf("recovery %s; CDI specs restored before the exit: %zu of %d\n",
              cancelled ? "cancelled by SIGTERM" : "finished before SIGTERM arrived", specs.size(), kClaims);
  if (cancelled) {
    EXPECT_LT(specs.size(), static_cast<size_t>(kClaims));
  }
}

TEST_F(RunShutdownTest, APrepareInFlightIsAnsweredAndTheProcessStillEndsInTime) {
  // The server answers everything but the claim read a prepare needs.
  server_.SetInterceptor([](const HttpRequest& req, HttpResponder&) {
    return req.path.find("/resourceclaims/") != std::string::npos;
  });
  Start(Kubeconfig(server_.url()));
  ASSERT_TRUE(WaitUntil([&] { return Logged("msg=running"); })) << "never ran";
  auto kubelet = liken::testing::TestKubelet::Register(dir_ + "/kubelet", liken::testing::DraVersion::kV1);
  ASSERT_TRUE(kubelet.ok()) << kubelet.status();
  absl::StatusOr<std::map<std::string, liken::testing::ClaimAnswer>> answer;
  std::thread prepare([&] {
    answer = (*kubelet)->Prepare({{"ns1", "11111111-2222-3333-4444-555555555555", "claim-a"}});
  });
  const std::string claim_path = informers::ResourceClaimPath("ns1", "claim-a");
  const bool asked = WaitUntil([&] { return server_.CountRequests(claim_path, false) > 0; });
  if (asked) TerminateWithinBudget();
  prepare.join();  // the call in flight gets an answer: the process did not leave it hanging
  ASSERT_TRUE(asked) << "the prepare never read its claim";
  if (answer.ok()) {
    ASSERT_EQ(answer->size(), 1u);
    EXPECT_FALSE(answer->begin()->second.error.empty()) << "the claim was never read, so it cannot be prepared";
  }
}

// Connects to 127.0.0.1:`port` and sends `request`; returns the socket (or -1).
int ConnectAndSend(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_F(RunShutdownTest, MetricsConnectionsHeldOpenAndAPrepareInFlight) {
  server_.SetInterceptor([](const HttpRequest& req, HttpResponder&) {
    return req.path.find("/resourceclaims/") != std::string::npos;
  });
  const int port = ClosedPort();
  Start(Kubeconfig(server_.url()), absl::StrCat("127.0.0.1:", port));
  ASSERT_TRUE(WaitUntil([&] { return Logged("msg=running"); })) << "never ran";
  // A scraper's keep-alive connection after one scrape, and a request that is never finished.
  int keep_alive = ConnectAndSend(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_GE(keep_alive, 0);
  char buf[4096];
  ASSERT_GT(::recv(keep_alive, buf, sizeof(buf), 0), 0);
  int half = ConnectAndSend(port, "GET /metr");
  ASSERT_GE(half, 0);
  auto kubelet = liken::testing::TestKubelet::Register(dir_ + "/kubelet", liken::testing::DraVersion::kV1);
  ASSERT_TRUE(kubelet.ok()) << kubelet.status();
  std::thread prepare([&] { (void)(*kubelet)->Prepare({{"ns1", "11111111-2222-3333-4444-555555555555", "claim-a"}}); });
  const bool asked = WaitUntil(
      [&] { return server_.CountRequests(informers::ResourceClaimPath("ns1", "claim-a"), false) > 0; });
  if (asked) TerminateWithinBudget();
  prepare.join();
  ::close(keep_alive);
  ::close(half);
  ASSERT_TRUE(asked) << "the prepare never read its claim";
}

TEST_F(RunShutdownTest, ATakenMetricsPortKeepsNeitherThePluginDownNorTheShutdownWaiting) {
  // Another process (the previous pod of a rolling update) holds the metrics port.
  TakenPort taken;
  ASSERT_TRUE(taken.listening());
  const std::string address = taken.address();
  Start(Kubeconfig(server_.url()), address);
  ASSERT_TRUE(WaitUntil([&] { return Logged("msg=running"); })) << "never ran";
  EXPECT_TRUE(Logged("metrics endpoint not ready")) << ReadAll(log_);
  EXPECT_TRUE(Logged(address)) << "the message names the address";
  EXPECT_TRUE(Logged("in use")) << ReadAll(log_);
  auto kubelet = liken::testing::TestKubelet::Register(dir_ + "/kubelet", liken::testing::DraVersion::kV1);
  ASSERT_TRUE(kubelet.ok()) << "the plugin serves without its metrics endpoint: " << kubelet.status();
  // The port is freed: a retry binds it.
  taken.Free();
  ASSERT_TRUE(WaitUntil([&] { return Logged("metrics endpoint ready"); })) << "never bound the freed port";
  const int scrape = ConnectAndSend(taken.port(), "GET /metrics HTTP/1.0\r\n\r\n");
  ASSERT_GE(scrape, 0);
  std::string body;
  char buf[4096];
  for (ssize_t n; (n = ::recv(scrape, buf, sizeof(buf), 0)) > 0;) body.append(buf, static_cast<size_t>(n));
  ::close(scrape);
  EXPECT_NE(body.find("liken_prepared_claims"), std::string::npos) << body;
  TerminateWithinBudget();
}

TEST_F(RunShutdownTest, SigtermWhileTheMetricsPortIsStillTaken) {
  TakenPort taken;
  ASSERT_TRUE(taken.listening());
  Start(Kubeconfig(server_.url()), taken.address());
  ASSERT_TRUE(WaitUntil([&] { return Logged("msg=running") && Logged("metrics endpoint not ready"); }))
      << "never ran";
  TerminateWithinBudget();  // the retry's back-off wait is cancelled
  taken.Free();
}

TEST_F(RunShutdownTest, ConfigurationThatCannotHealEndsTheProcess) {
  struct Case {
    std::string name, server, extra_cluster, user, message;
  };
  const std::vector<Case> cases = {
      {"missing tokenFile", server_.url(), "", "tokenFile: " + dir_ + "/no-token", "tokenFile"},
      {"CA data that is not PEM", "https://127.0.0.1:1", ", certificate-authority-data: Q0EgUEVN", "token: t",
       "certificate authority"},
      {"an unterminated IPv6 host", "http://[::1", "", "token: t", "IPv6"},
  };
  for (const auto& c : cases) {
    Start(Kubeconfig(c.server, c.extra_cluster, c.user));
    int status = WaitForExit(std::chrono::seconds(30));
    if (status == -1) {
      ADD_FAILURE() << c.name << ": still running (retrying) after 30 s";
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      continue;
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << c.name << ": wait status " << status;
    EXPECT_TRUE(Logged(c.message)) << c.name << ": " << ReadAll(log_);
  }
}

}  // namespace
}  // namespace liken
