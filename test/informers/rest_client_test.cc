#include "informers/rest_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "informers/kube_config.h"
#include "test/controller/fake_clock.h"
#include "test/informers/fake_api_server.h"

namespace liken::informers {
namespace {

using liken::testing::FakeApiServer;
using liken::testing::FakeClock;
using liken::testing::HttpRequest;
using liken::testing::HttpResponder;

std::string TempDir() {
  char tmpl[] = "/tmp/liken-informers-XXXXXX";
  return ::mkdtemp(tmpl);
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class RestClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<KubeClient> NewClient(KubeConfig config = {}) {
    config.server = server_.url();
    auto client = NewRestClient(config, &clock_);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  FakeApiServer server_;
  FakeClock clock_;
};

TEST_F(RestClientTest, MapsHttpCodes) {
  auto client = NewClient();
  auto missing = client->Get(NodePath("nope"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(HttpCodeOf(missing.status()), 404);
  EXPECT_EQ(StatusFromHttp(409, R"({"reason":"AlreadyExists"})").code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(IsConflict(StatusFromHttp(409, R"({"reason":"Conflict"})")));
  EXPECT_TRUE(IsGone(StatusFromHttp(410, "")));
  EXPECT_EQ(StatusFromHttp(429, "").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusFromHttp(503, "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromHttp(403, "").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusFromHttp(422, "").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(StatusFromHttp(201, "").ok());
}

TEST_F(RestClientTest, SendsTokenAndUserAgent) {
  KubeConfig config;
  config.token = "secret-token";
  auto client = NewClient(config);
  server_.Upsert("nodes", {{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  auto req = server_.Requests().back();
  EXPECT_EQ(req.headers["authorization"], "Bearer secret-token");
  EXPECT_EQ(req.headers["user-agent"], std::string("liken-dra/") + LIKEN_VERSION);
}

TEST_F(RestClientTest, RereadsARotatedTokenFile) {
  std::string dir = TempDir();
  WriteFile(dir + "/token", "first\n");
  KubeConfig config;
  config.token_file = dir + "/token";
  auto client = NewClient(config);
  server_.Upsert("nodes", {{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  EXPECT_EQ(server_.Requests().back().headers["authorization"], "Bearer first");
  WriteFile(dir + "/token", "second\n");
  struct timespec times[2] = {{0, UTIME_NOW}, {12345, 0}};  // a different mtime, whatever the clock
  ::utimensat(AT_FDCWD, (dir + "/token").c_str(), times, 0);
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  EXPECT_EQ(server_.Requests().back().headers["authorization"], "Bearer second");
}

TEST_F(RestClientTest, Retries429And5xxHonouringRetryAfter) {
  int calls = 0;
  server_.SetInterceptor([&](const HttpRequest&, HttpResponder& out) {
    ++calls;
    if (calls == 1) {
      out.Respond(429, R"({"code":429})", "Retry-After: 2\r\n");
      return true;
    }
    if (calls == 2) {
      out.Respond(503, R"({"code":503})");
      return true;
    }
    return false;
  });
  server_.Upsert("nodes", {{"metadata", {{"name", "n1"}}}});
  auto client = NewClient();
  absl::StatusOr<nlohmann::json> result;
  std::thread t([&] { result = client->Get(NodePath("n1")); });
  while (clock_.waiters() == 0) std::this_thread::yield();
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(server_.Requests().size(), 1u) << "Retry-After: 2 is honoured";
  clock_.Advance(absl::Seconds(1));
  // Then the 503 backs off on its own schedule.
  while (server_.Requests().size() < 3) {
    if (clock_.waiters() > 0) clock_.Advance(absl::Seconds(1));
    std::this_thread::yield();
  }
  t.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(calls, 3);
}

TEST_F(RestClientTest, WritesAreNotRetriedOnPlain500) {
  int calls = 0;
  server_.SetInterceptor([&](const HttpRequest&, HttpResponder& out) {
    ++calls;
    out.Respond(500, R"({"code":500})");
    return true;
  });
  auto client = NewClient();
  auto r = client->Create(ResourceSlicesPath(), {{"metadata", {{"name", "x"}}}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(calls, 1);
}

TEST_F(RestClientTest, ClientSideRateLimit) {
  KubeConfig config;
  config.qps = 1;
  config.burst = 1;
  auto client = NewClient(config);
  server_.Upsert("nodes", {{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  std::thread t([&] { (void)client->Get(NodePath("n1")); });
  while (clock_.waiters() == 0) std::this_thread::yield();
  EXPECT_EQ(server_.Requests().size(), 1u) << "the second request waits for a token";
  clock_.Advance(absl::Seconds(1));
  t.join();
  EXPECT_EQ(server_.Requests().size(), 2u);
}

TEST_F(RestClientTest, RejectsABadServerUrl) {
  KubeConfig config;
  config.server = "ftp://nowhere";
  EXPECT_EQ(NewRestClient(config, &clock_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KubeconfigTest, LoadsServerCaTokenAndClientCertificate) {
  std::string dir = TempDir();
  WriteFile(dir + "/client.key", "KEY PEM");
  WriteFile(dir + "/config", R"(apiVersion: v1
kind: Config
current-context: main
contexts:
- name: main
  context: {cluster: c1, user: u1}
- name: other
  context: {cluster: c2, user: u2}
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: )" + absl::Base64Escape("CA PEM") + R"(
- name: c2
  cluster: {server: https://other:443, insecure-skip-tls-verify: true}
users:
- name: u1
  user:
    client-certificate-data: )" + absl::Base64Escape("CERT PEM") + R"(
    client-key: client.key
- name: u2
  user: {token: abc}
)");
  auto config = LoadKubeconfig(dir + "/config");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, "CA PEM");
  EXPECT_EQ(config->client_cert_pem, "CERT PEM");
  EXPECT_EQ(config->client_key_pem, "KEY PEM");
  EXPECT_EQ(config->user_agent.rfind("liken-dra/", 0), 0u);
  auto other = LoadKubeconfig(dir + "/config", "other");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->token, "abc");
  EXPECT_TRUE(other->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, MalformedFilesGiveClearErrors) {
  std::string dir = TempDir();
  WriteFile(dir + "/a", "- just\n- a list\n");
  EXPECT_EQ(LoadKubeconfig(dir + "/a").status().code(), absl::StatusCode::kInvalidArgument);
  WriteFile(dir + "/b", "current-context: x\ncontexts: []\n");
  auto b = LoadKubeconfig(dir + "/b");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("'x'"), std::string::npos) << b.status();
  WriteFile(dir + "/c", "{{{ not yaml");
  EXPECT_EQ(LoadKubeconfig(dir + "/c").status().code(), absl::StatusCode::kInvalidArgument);
  WriteFile(dir + "/d", R"(current-context: m
contexts: [{name: m, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://x", certificate-authority-data: "!!notbase64"}}]
users: [{name: u, user: {}}]
)");
  EXPECT_EQ(LoadKubeconfig(dir + "/d").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(LoadKubeconfig(dir + "/missing").ok());
}

// A kubeconfig, token or CA that is a FIFO (or a device, or a socket) is refused at once, never waited on.
TEST(KubeconfigTest, FifosAreRefusedAtOnce) {
  ::alarm(120);  // a watchdog, not a timed assertion: a blocking open of a FIFO never returns
  std::string dir = TempDir();
  ASSERT_EQ(::mkfifo((dir + "/config").c_str(), 0600), 0);
  auto config = LoadKubeconfig(dir + "/config");
  EXPECT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("is a FIFO, not a regular file"), std::string::npos) << config.status();
  WriteFile(dir + "/with-ca", R"(current-context: m
contexts: [{name: m, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://x", certificate-authority: ca.fifo}}]
users: [{name: u, user: {}}]
)");
  ASSERT_EQ(::mkfifo((dir + "/ca.fifo").c_str(), 0600), 0);
  auto with_ca = LoadKubeconfig(dir + "/with-ca");
  EXPECT_EQ(with_ca.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(with_ca.status().message().find("FIFO"), std::string::npos) << with_ca.status();
  std::string sa = dir + "/sa";
  ASSERT_EQ(::mkdir(sa.c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((sa + "/token").c_str(), 0600), 0);
  WriteFile(sa + "/ca.crt", "CA");
  auto token = InClusterConfig("10.96.0.1", "443", sa);
  EXPECT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(token.status().message().find("FIFO"), std::string::npos) << token.status();
  ASSERT_EQ(::unlink((sa + "/token").c_str()), 0);
  WriteFile(sa + "/token", "tok");
  ASSERT_EQ(::unlink((sa + "/ca.crt").c_str()), 0);
  ASSERT_EQ(::mkfifo((sa + "/ca.crt").c_str(), 0600), 0);
  EXPECT_EQ(InClusterConfig("10.96.0.1", "443", sa).status().code(), absl::StatusCode::kFailedPrecondition);
  ::alarm(0);
}

TEST(InClusterConfigTest, ReadsServiceAccount) {
  std::string dir = TempDir();
  WriteFile(dir + "/token", "tok");
  WriteFile(dir + "/ca.crt", "CA");
  auto config = InClusterConfig("10.96.0.1", "443", dir);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->token_file, dir + "/token");
  EXPECT_EQ(config->ca_pem, "CA");
  EXPECT_EQ(InClusterConfig("fd00::1", "443", dir)->server, "https://[fd00::1]:443");
  EXPECT_EQ(InClusterConfig("", "", dir).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(InClusterConfig("h", "1", dir + "/nope").status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace liken::informers
