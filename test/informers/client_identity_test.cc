#include "informers/client_identity.h"

#include <gtest/gtest.h>

#include <string>

#include "test/informers/test_pki.h"

namespace liken::informers {
namespace {

using liken::testing::MakeTestCa;
using liken::testing::MakeTestLeaf;

TEST(ClientIdentityTest, ParsesACertificateChainAndItsKeyOnce) {
  auto ca = MakeTestCa("ca");
  auto leaf = MakeTestLeaf(ca, "node-a", /*server=*/false);
  auto identity = ClientIdentity::FromPem(leaf.cert_pem + ca.cert_pem, leaf.key_pem);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ((*identity)->Subject(), "CN=node-a");
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE((*identity)->ApplyTo(ctx).ok());
  EXPECT_EQ(SSL_CTX_check_private_key(ctx), 1);
  STACK_OF(X509)* chain = nullptr;
  ASSERT_EQ(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
  EXPECT_EQ(sk_X509_num(chain), 1) << "the intermediate after the certificate";
  SSL_CTX_free(ctx);
  // The identity outlives a context that held it (reference counted), and serves the next one.
  SSL_CTX* next = SSL_CTX_new(TLS_client_method());
  ASSERT_TRUE((*identity)->ApplyTo(next).ok());
  EXPECT_EQ(SSL_CTX_check_private_key(next), 1);
  SSL_CTX_free(next);
}

TEST(ClientIdentityTest, SaysWhatIsWrong) {
  auto ca = MakeTestCa("ca");
  auto a = MakeTestLeaf(ca, "a", false);
  auto b = MakeTestLeaf(ca, "b", false);
  struct Case {
    std::string cert, key, message;
  } cases[] = {
      {"", a.key_pem, "client certificate is not a PEM certificate"},
      {"CERT PEM", a.key_pem, "client certificate is not a PEM certificate"},
      {a.cert_pem + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", a.key_pem, "broken"},
      {a.cert_pem, "", "client key is not a PEM private key"},
      {a.cert_pem, "KEY PEM", "client key is not a PEM private key"},
      {a.cert_pem, b.key_pem, "does not belong"},
  };
  for (const auto& c : cases) {
    auto identity = ClientIdentity::FromPem(c.cert, c.key);
    EXPECT_EQ(identity.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_NE(identity.status().message().find(c.message), std::string::npos) << identity.status();
  }
}

}  // namespace
}  // namespace liken::informers
