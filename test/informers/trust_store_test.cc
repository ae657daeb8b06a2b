#include "informers/trust_store.h"

#include <gtest/gtest.h>

#include <string>

#include "test/informers/test_certificate.h"

namespace liken::informers {
namespace {

TEST(TrustStoreTest, HoldsExactlyTheGivenCertificates) {
  auto one = TrustStore::FromPem(liken::testing::kTestCertPem);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)->size(), 1);
  // The same certificate twice is one trust anchor.
  auto twice = TrustStore::FromPem(std::string(liken::testing::kTestCertPem) + "\n" + liken::testing::kTestCertPem);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ((*twice)->size(), 1);
}

TEST(TrustStoreTest, ReplacesTheContextsStore) {
  auto trust = TrustStore::FromPem(liken::testing::kTestCertPem);
  ASSERT_TRUE(trust.ok()) << trust.status();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(SSL_CTX_set_default_verify_paths(ctx), 1);  // what the HTTP client does for each new connection
  (*trust)->ApplyTo(ctx);
  EXPECT_EQ(sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx))), 1)
      << "only the given CA, not the system bundle";
  SSL_CTX_free(ctx);
  // The store outlives a context that held it (reference counted).
  EXPECT_EQ((*trust)->size(), 1);
}

TEST(TrustStoreTest, DataWithoutACertificateIsRefused) {
  for (const char* pem : {"", "not a certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}) {
    auto trust = TrustStore::FromPem(pem);
    EXPECT_EQ(trust.status().code(), absl::StatusCode::kInvalidArgument) << pem;
  }
}

}  // namespace
}  // namespace liken::informers
