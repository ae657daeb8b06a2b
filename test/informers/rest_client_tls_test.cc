// The REST client against a real TLS server: rotated CA and client certificate files are used by the next
// connection, and the rotation forces one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "informers/kube_config.h"
#include "informers/rest_client.h"
#include "test/common/fake_clock.h"
#include "test/informers/temp_files.h"
#include "test/informers/fake_tls_server.h"
#include "test/informers/test_pki.h"

namespace liken::informers {
namespace {

using liken::testing::FakeClock;
using liken::testing::FakeTlsServer;
using liken::testing::MakeTestCa;
using liken::testing::MakeTestLeaf;
using liken::testing::TestKeyPair;

std::string TempDir() { return liken::testing::MakeTempDir("liken-tls"); }

void WriteFile(const std::string& path, const std::string& text) { liken::testing::WriteTextFile(path, text); }

// A kubelet-style volume in `dir`: each name a link through `..data` to the current version's directory.
class ProjectedVolume {
 public:
  explicit ProjectedVolume(std::string dir) : dir_(std::move(dir)) {}

  // Publishes a new version holding `files` (name, contents) atomically, as kubelet does.
  void Publish(const std::vector<std::pair<std::string, std::string>>& files) {
    const std::string version = "..v" + std::to_string(++versions_);
    ASSERT_EQ(::mkdir((dir_ + "/" + version).c_str(), 0755), 0);
    for (const auto& [name, text] : files) {
      WriteFile(dir_ + "/" + version + "/" + name, text);
      ::symlink(("..data/" + name).c_str(), (dir_ + "/" + name).c_str());  // exists after the first version
    }
    ASSERT_EQ(::symlink(version.c_str(), (dir_ + "/..data_tmp").c_str()), 0);
    ASSERT_EQ(::rename((dir_ + "/..data_tmp").c_str(), (dir_ + "/..data").c_str()), 0);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  int versions_ = 0;
};

TEST(RestClientTlsTest, ANewConnectionUsesTheRotatedCaAndClientCertificate) {
  const TestKeyPair ca1 = MakeTestCa("ca-one");
  const TestKeyPair ca2 = MakeTestCa("ca-two");
  const TestKeyPair server1 = MakeTestLeaf(ca1, "apiserver-one", /*server=*/true);
  const TestKeyPair server2 = MakeTestLeaf(ca2, "apiserver-two", /*server=*/true);
  const TestKeyPair client1 = MakeTestLeaf(ca1, "node-a", /*server=*/false);
  const TestKeyPair client2 = MakeTestLeaf(ca2, "node-b", /*server=*/false);

  FakeTlsServer server(server1);
  ProjectedVolume volume(TempDir());
  volume.Publish({{"ca.crt", ca1.cert_pem}, {"tls.crt", client1.cert_pem}, {"tls.key", client1.key_pem}});
  KubeConfig config;
  config.server = server.url();
  config.ca_file = volume.Path("ca.crt");
  config.ca_pem = ca1.cert_pem;
  config.client_cert_file = volume.Path("tls.crt");
  config.client_cert_pem = client1.cert_pem;
  config.client_key_file = volume.Path("tls.key");
  config.client_key_pem = client1.key_pem;
  config.max_retries = 0;  // a refused handshake fails the call at once
  FakeClock clock;
  auto client = NewRestClient(config, &clock);
  ASSERT_TRUE(client.ok()) << client.status();

  // (Whether the second request reuses the first one's connection is cpprestsdk's timing: it returns a
  // connection to its pool just after the body was read. So handshakes are only counted where the client
  // must open a new connection.)
  ASSERT_TRUE((*client)->Get(NodePath("n1")).ok());
  ASSERT_TRUE((*client)->Get(NodePath("n1")).ok());
  EXPECT_EQ(server.Requests(), 2);
  EXPECT_EQ(server.ClientSubjects().back(), "CN=node-a");

  // The CA is rotated to one that did not sign the server's certificate: a new connection refuses it.
  // Were the kept-alive connection reused, the request would go through on it.
  volume.Publish({{"ca.crt", ca2.cert_pem}, {"tls.crt", client1.cert_pem}, {"tls.key", client1.key_pem}});
  const int before_ca = server.Handshakes();
  auto refused = (*client)->Get(NodePath("n1"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_EQ(server.Requests(), 2) << "not sent on the old connection";

  // The server moves to a certificate of the new CA: trusted now.
  server.SetCertificate(server2);
  auto trusted = (*client)->Get(NodePath("n1"));
  ASSERT_TRUE(trusted.ok()) << trusted.status();
  EXPECT_EQ(server.Handshakes(), before_ca + 1);

  // The client certificate is rotated: the next request comes on a new connection presenting it.
  volume.Publish({{"ca.crt", ca2.cert_pem}, {"tls.crt", client2.cert_pem}, {"tls.key", client2.key_pem}});
  const int before_cert = server.Handshakes();
  ASSERT_TRUE((*client)->Get(NodePath("n1")).ok());
  EXPECT_EQ(server.Handshakes(), before_cert + 1);
  EXPECT_EQ(server.ClientSubjects().back(), "CN=node-b");

  // A broken rotation keeps the last good material: requests go on, and any new connection presents it.
  volume.Publish({{"ca.crt", "garbage"}, {"tls.crt", client2.cert_pem}, {"tls.key", "garbage"}});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*client)->Get(NodePath("n1")).ok());
  for (const std::string& subject : server.ClientSubjects()) EXPECT_NE(subject, "") << "always a certificate";
  EXPECT_EQ(server.ClientSubjects().back(), "CN=node-b");
}

}  // namespace
}  // namespace liken::informers
