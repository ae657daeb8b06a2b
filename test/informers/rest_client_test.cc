#include "informers/rest_client.h"
#include "test/informers/temp_files.h"
#include "test/informers/test_certificate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stop_token>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "informers/kube_config.h"
#include "test/common/fake_clock.h"
#include "test/informers/fake_api_server.h"

namespace liken::informers {
namespace {

using liken::testing::FakeApiServer;
using liken::testing::FakeClock;
using liken::testing::HttpRequest;
using liken::testing::HttpResponder;

std::string TempDir() { return liken::testing::MakeTempDir("liken-informers"); }

void WriteFile(const std::string& path, const std::string& text) { liken::testing::WriteTextFile(path, text); }

// A self-signed test certificate with its key, and a key of another pair (made for these tests only).
using ::liken::testing::kTestCertPem;
constexpr char kTestKeyPem[] = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgS7o0bBc0VzPLJONf
M4P2TnTUe2xStWrA3OoC6DMK2KmhRANCAAQU5JfJvjmKzmdlEAWJD7vQnVUbb25m
tYeK4HsL8iPBWFoN/2/Jvqkftvw6/7yrBZeKOe9fzriVLo/uBSx14DMo
-----END PRIVATE KEY-----
)";
constexpr char kOtherKeyPem[] = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg/IW7+zZnowzCU1Qs
/1bXU0/P77ZMqbH91UmuDNQrIEihRANCAATWBxT5MQAdfY4AKQicXCt092D4SA8U
fRMsx1LchpgBHsQLiKj+ZeQLM6RHPqwhB+8tQ9EZxlz9Qd4lmS5kO3Yd
-----END PRIVATE KEY-----
)";

class RestClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<KubeClient> NewClient(KubeConfig config = {}, std::stop_token stop = {}) {
    config.server = server_.url();
    auto client = NewRestClient(config, &clock_, stop);
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
  liken::testing::SetMtime(dir + "/token", 12345);  // a different mtime, whatever the clock
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  EXPECT_EQ(server_.Requests().back().headers["authorization"], "Bearer second");
}

// A projected volume rotates the token by pointing `..data` at a new directory: a new inode is enough, even
// with the same size and modification time.
TEST_F(RestClientTest, RereadsATokenSwappedInByItsDataSymlink) {
  std::string dir = TempDir();
  ASSERT_EQ(::mkdir((dir + "/..v1").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/..v2").c_str(), 0755), 0);
  WriteFile(dir + "/..v1/token", "first\n");
  WriteFile(dir + "/..v2/token", "other\n");
  liken::testing::SetMtime(dir + "/..v1/token", 5000);
  liken::testing::SetMtime(dir + "/..v2/token", 5000);
  ASSERT_EQ(::symlink("..v1", (dir + "/..data").c_str()), 0);
  ASSERT_EQ(::symlink("..data/token", (dir + "/token").c_str()), 0);
  KubeConfig config;
  config.token_file = dir + "/token";
  auto client = NewClient(config);
  server_.Upsert("nodes", {{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  EXPECT_EQ(server_.Requests().back().headers["authorization"], "Bearer first");
  ASSERT_EQ(::symlink("..v2", (dir + "/..data_tmp").c_str()), 0);
  ASSERT_EQ(::rename((dir + "/..data_tmp").c_str(), (dir + "/..data").c_str()), 0);
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  EXPECT_EQ(server_.Requests().back().headers["authorization"], "Bearer other");
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
  for (const char* server : {"ftp://nowhere", "http://[::1", "https://[::1", "http://", "https://a b/",
                             "http://[not-ipv6]:80", "https://host:99999", "http://host/?q=1", "https://:443"}) {
    config.server = server;
    EXPECT_EQ(NewRestClient(config, &clock_).status().code(), absl::StatusCode::kInvalidArgument) << server;
  }
  for (const char* server : {"http://[::1]:8080", "https://10.0.0.1:6443", "https://api.example:443/k8s/c1"}) {
    config.server = server;
    EXPECT_TRUE(NewRestClient(config, &clock_).ok()) << server;
  }
}

TEST_F(RestClientTest, RejectsTlsMaterialThatCannotWork) {
  KubeConfig config;
  config.server = "https://10.0.0.1:6443";
  config.ca_pem = "CA PEM";
  auto not_pem = NewRestClient(config, &clock_);
  EXPECT_EQ(not_pem.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(not_pem.status().message().find("certificate authority"), std::string::npos) << not_pem.status();
  config.server = "http://10.0.0.1:8080";  // plain http never reads the CA
  EXPECT_TRUE(NewRestClient(config, &clock_).ok());
  config.server = "https://10.0.0.1:6443";
  config.ca_pem = kTestCertPem;
  EXPECT_TRUE(NewRestClient(config, &clock_).ok());
  config.client_cert_pem = kTestCertPem;
  config.client_key_pem = kTestKeyPem;
  EXPECT_TRUE(NewRestClient(config, &clock_).ok());
  config.client_key_pem = kOtherKeyPem;
  auto mismatch = NewRestClient(config, &clock_);
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("client key"), std::string::npos) << mismatch.status();
  config.client_key_pem = "KEY PEM";
  EXPECT_EQ(NewRestClient(config, &clock_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RestClientTest, StopEndsARequestThatIsNeverAnswered) {
  server_.SetInterceptor(FakeApiServer::NeverAnswer());
  KubeConfig config;
  config.request_timeout = absl::Hours(1);  // only the stop can end it
  std::stop_source stop;
  auto client = NewClient(config, stop.get_token());
  absl::StatusOr<nlohmann::json> result;
  std::thread t([&] { result = client->Get(NodePath("n1")); });
  server_.WaitForRequests(NodePath("n1"), false, 1);
  stop.request_stop();
  t.join();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_EQ(client->Get(NodePath("n1")).status().code(), absl::StatusCode::kCancelled) << "later calls fail at once";
  EXPECT_EQ(server_.CountRequests(NodePath("n1"), false), 1);
}

TEST_F(RestClientTest, CallerCancellationEndsAListThatIsNeverAnswered) {
  server_.SetInterceptor(FakeApiServer::NeverAnswer());
  KubeConfig config;
  config.request_timeout = absl::Hours(1);
  auto client = NewClient(config);
  std::stop_source cancel;
  absl::StatusOr<nlohmann::json> result;
  std::thread t([&] { result = client->List(PodsPath(), {}, cancel.get_token()); });
  server_.WaitForRequests(PodsPath(), false, 1);
  cancel.request_stop();
  t.join();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
}

TEST_F(RestClientTest, StopEndsARetryBackoff) {
  server_.SetInterceptor([](const HttpRequest&, HttpResponder& out) {
    out.Respond(503, R"({"code":503})");
    return true;
  });
  std::stop_source stop;
  auto client = NewClient({}, stop.get_token());
  absl::StatusOr<nlohmann::json> result;
  std::thread t([&] { result = client->Get(NodePath("n1")); });
  // The fake clock never moves: only the stop can end the backoff after the first 503.
  while (clock_.waiters() == 0) std::this_thread::yield();
  stop.request_stop();
  t.join();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_EQ(server_.Requests().size(), 1u);
}

TEST_F(RestClientTest, ResponseBodiesOverTheLimitFail) {
  KubeConfig config;
  config.max_response_bytes = 4096;
  auto client = NewClient(config);
  server_.Upsert("nodes", {{"metadata", {{"name", "big"}, {"labels", {{"x", std::string(8192, 'a')}}}}}});
  server_.Upsert("nodes", {{"metadata", {{"name", "small"}}}});
  auto big = client->Get(NodePath("big"));  // with a Content-Length
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted) << big.status();
  EXPECT_TRUE(IsLimitExceeded(big.status()));
  EXPECT_TRUE(client->Get(NodePath("small")).ok());
  // A chunked body (no Content-Length) that grows past the limit.
  server_.SetInterceptor([](const HttpRequest& req, HttpResponder& out) {
    if (req.path != NodePath("chunked")) return false;
    out.StartStream();
    out.SendChunk(R"({"metadata":{"name":"chunked","x":")");
    for (int i = 0; i < 16 && out.SendChunk(std::string(1024, 'b')); ++i) {
    }
    out.SendChunk(R"("}})");
    out.EndStream();
    return true;
  });
  auto chunked = client->Get(NodePath("chunked"));
  EXPECT_TRUE(IsLimitExceeded(chunked.status())) << chunked.status();
}

TEST_F(RestClientTest, RequestBodiesOverTheLimitAreNotSent) {
  KubeConfig config;
  config.max_request_bytes = 1024;
  auto client = NewClient(config);
  auto r = client->Create(ResourceSlicesPath(), {{"metadata", {{"name", "x"}}}, {"pad", std::string(2048, 'p')}});
  EXPECT_TRUE(IsLimitExceeded(r.status())) << r.status();
  EXPECT_EQ(server_.CountWrites(), 0);
  EXPECT_TRUE(client->Create(ResourceSlicesPath(), {{"metadata", {{"name", "x"}}}}).ok());
}

TEST_F(RestClientTest, AnEndlessWatchLineEndsTheWatchAtTheLimit) {
  std::atomic<int64_t> sent{0};
  server_.SetInterceptor(FakeApiServer::EndlessWatchLine(&sent));
  KubeConfig config;
  config.max_watch_event_bytes = 1 << 20;
  auto client = NewClient(config);
  int events = 0;
  absl::Status s = client->Watch(PodsPath(), {}, [&](const WatchEvent&) { return ++events > 0; }, {});
  EXPECT_TRUE(IsLimitExceeded(s)) << s;
  EXPECT_EQ(events, 0);
  server_.WaitForOpenWatches(0);
}

TEST_F(RestClientTest, AWatchThatGoesSilentEndsWithDeadlineExceeded) {
  // Headers, then nothing: the client's idle timer ends the watch, told apart by its error code.
  server_.SetInterceptor([](const HttpRequest& req, HttpResponder& out) {
    if (req.query.count("watch") == 0) return false;
    out.StartStream();
    return true;
  });
  KubeConfig config;
  config.watch_idle_timeout = absl::Milliseconds(300);
  auto client = NewClient(config);
  absl::Status s = client->Watch(PodsPath(), {}, [](const WatchEvent&) { return true; }, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
}

TEST_F(RestClientTest, AWatchCutByTheServerIsUnavailableNotATimeout) {
  server_.SetInterceptor([](const HttpRequest& req, HttpResponder& out) {
    if (req.query.count("watch") == 0) return false;
    out.StartStream();
    out.SendChunk("{\"type\":\"ADDED\",");  // half an event, then the connection drops
    out.Abort();
    return true;
  });
  auto client = NewClient();
  absl::Status s = client->Watch(PodsPath(), {}, [](const WatchEvent&) { return true; }, {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
}

TEST_F(RestClientTest, WatchErrorEventsWithOddCodesAreErrors) {
  int watches = 0;
  server_.SetInterceptor([&](const HttpRequest& req, HttpResponder& out) {
    if (req.query.count("watch") == 0) return false;
    out.StartStream();
    const char* codes[] = {R"("code":1e300)", R"("code":"410")", R"("code":200)", R"("code":410)"};
    out.SendLine(std::string(R"({"type":"ERROR","object":{"kind":"Status",)") + codes[watches++ % 4] + "}}");
    out.EndStream();
    return true;
  });
  auto client = NewClient();
  for (int i = 0; i < 3; ++i) {
    absl::Status s = client->Watch(PodsPath(), {}, [](const WatchEvent&) { return true; }, {});
    EXPECT_EQ(HttpCodeOf(s), 500) << i << ": " << s;
  }
  EXPECT_TRUE(IsGone(client->Watch(PodsPath(), {}, [](const WatchEvent&) { return true; }, {})));
}

TEST_F(RestClientTest, ErrorMessagesAreBounded) {
  const std::string huge(1 << 20, 'u');
  absl::Status s = StatusFromHttp(422, nlohmann::json{{"message", "uid " + huge + " is invalid"}}.dump());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), kMaxErrorMessageBytes + 100) << s.message().size();
  EXPECT_NE(s.message().find("cut"), std::string::npos);
  EXPECT_LT(StatusFromHttp(500, huge).message().size(), 300u);
  // The reason comes from the server too (found by the fuzzer: a long reason with a long message).
  absl::Status reason = StatusFromHttp(409, nlohmann::json{{"reason", huge}, {"message", huge}}.dump());
  EXPECT_LT(reason.message().size(), kMaxErrorMessageBytes + 100) << reason.message().size();
  // A cut never splits a UTF-8 character.
  std::string accents;
  while (accents.size() < 2 * kMaxErrorMessageBytes) accents += "\xc3\xa9";
  absl::Status u = StatusFromHttp(400, nlohmann::json{{"message", "x" + accents}}.dump());
  std::string m(u.message());
  EXPECT_EQ(m.substr(0, m.find("...")).size() % 2, 1u) << "'x' then whole two-byte characters";
  // Names that are no DNS names come back short, too.
  absl::Status name = ValidateDnsSubdomain(huge);
  EXPECT_EQ(name.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(name.message().size(), 200u);
}

TEST_F(RestClientTest, PathsThatAreNoApiPathsAreNeverSent) {
  auto client = NewClient();
  for (const std::string& path : {ResourceSlicePath(".."), ResourceSlicePath("."), ResourceSlicePath(""),
                                  ResourceClaimPath("ns", ".."), ResourceClaimPath("..", "c"), NodePath("N1"),
                                  NodePath("a%2Fb"), std::string("relative")}) {
    EXPECT_EQ(client->Get(path).status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_EQ(client->Delete(path).code(), absl::StatusCode::kInvalidArgument) << path;
  }
  EXPECT_EQ(client->Watch("/api/v1/../pods", {}, [](const WatchEvent&) { return false; }, {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(server_.Requests().empty());
  EXPECT_TRUE(ValidateDnsSubdomain("node-a.example").ok());
  EXPECT_FALSE(ValidateDnsSubdomain("a..b").ok());
  EXPECT_FALSE(ValidateDnsSubdomain("-a").ok());
  EXPECT_TRUE(ValidateDnsLabel("kube-system").ok());
  EXPECT_FALSE(ValidateDnsLabel("a.b").ok());
  EXPECT_FALSE(ValidateDnsLabel(std::string(64, 'a')).ok());
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
  // Where each came from: inline data has no file; a relative file resolves against the kubeconfig's folder.
  EXPECT_EQ(config->ca_file, "");
  EXPECT_EQ(config->client_cert_file, "");
  EXPECT_EQ(config->client_key_file, dir + "/client.key");
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

TEST(KubeconfigTest, ATokenFileMissingAtStartIsAnError) {
  std::string dir = TempDir();
  const std::string config = R"(current-context: m
contexts: [{name: m, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users: [{name: u, user: {tokenFile: token}}]
)";
  WriteFile(dir + "/config", config);
  auto missing = LoadKubeconfig(dir + "/config");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("tokenFile"), std::string::npos) << missing.status();
  WriteFile(dir + "/token", "tok\n");
  auto present = LoadKubeconfig(dir + "/config");
  ASSERT_TRUE(present.ok()) << present.status();
  EXPECT_EQ(present->token_file, dir + "/token");
}

TEST_F(RestClientTest, ATokenFileMissingLaterKeepsTheLastToken) {
  std::string dir = TempDir();
  WriteFile(dir + "/token", "first\n");
  KubeConfig config;
  config.token_file = dir + "/token";
  auto client = NewClient(config);
  server_.Upsert("nodes", {{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  ASSERT_EQ(::unlink((dir + "/token").c_str()), 0);  // mid-rotation
  ASSERT_TRUE(client->Get(NodePath("n1")).ok());
  EXPECT_EQ(server_.Requests().back().headers["authorization"], "Bearer first");
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
  EXPECT_EQ(config->ca_file, dir + "/ca.crt");
  EXPECT_EQ(InClusterConfig("fd00::1", "443", dir)->server, "https://[fd00::1]:443");
  EXPECT_EQ(InClusterConfig("", "", dir).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(InClusterConfig("h", "1", dir + "/nope").status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace liken::informers
