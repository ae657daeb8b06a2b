#include "test/informers/test_pki.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace liken::testing {

void AbortUnless(bool ok, const char* who, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "%s: %s failed\n", who, what);
    std::abort();
  }
}

namespace {

void Check(bool ok, const char* what) { AbortUnless(ok, "test PKI", what); }

struct Freer {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  void operator()(X509* c) const { X509_free(c); }
  void operator()(BIO* b) const { BIO_free(b); }
};

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, n > 0 ? static_cast<size_t>(n) : 0);
}

std::string KeyPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, Freer> bio(BIO_new(BIO_s_mem()));
  Check(bio && PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1, "write key");
  return BioText(bio.get());
}

std::string CertPem(X509* cert) {
  std::unique_ptr<BIO, Freer> bio(BIO_new(BIO_s_mem()));
  Check(bio && PEM_write_bio_X509(bio.get(), cert) == 1, "write certificate");
  return BioText(bio.get());
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(ext != nullptr && X509_add_ext(cert, ext, -1) == 1, "add extension");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, issued by `issuer_cert` (null: self-signed) and signed with `issuer_key`.
TestKeyPair Make(const std::string& cn, EVP_PKEY* issuer_key, X509* issuer_cert, bool ca, bool server) {
  std::unique_ptr<EVP_PKEY, Freer> key(EVP_EC_gen("P-256"));
  Check(key != nullptr, "generate key");
  std::unique_ptr<X509, Freer> cert(X509_new());
  Check(cert != nullptr && X509_set_version(cert.get(), 2) == 1, "new certificate");
  unsigned char serial[16];
  Check(RAND_bytes(serial, sizeof(serial)) == 1, "serial");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  Check(bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) != nullptr, "set serial");
  BN_free(bn);
  Check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600) != nullptr,
        "validity");
  X509_NAME* name = X509_get_subject_name(cert.get());
  Check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                                   -1, -1, 0) == 1,
        "subject");
  X509* issuer = issuer_cert != nullptr ? issuer_cert : cert.get();
  Check(X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer)) == 1, "issuer");
  Check(X509_set_pubkey(cert.get(), key.get()) == 1, "public key");
  AddExtension(cert.get(), issuer, NID_subject_key_identifier, "hash");
  if (ca) {
    AddExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert.get(), issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert.get(), issuer, NID_authority_key_identifier, "keyid");
    AddExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
    AddExtension(cert.get(), issuer, NID_key_usage, "critical,digitalSignature");
    AddExtension(cert.get(), issuer, NID_ext_key_usage, server ? "serverAuth" : "clientAuth");
    if (server) AddExtension(cert.get(), issuer, NID_subject_alt_name, "IP:127.0.0.1");
  }
  Check(X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key.get(), EVP_sha256()) > 0, "sign");
  return TestKeyPair{CertPem(cert.get()), KeyPem(key.get())};
}

}  // namespace

TestKeyPair MakeTestCa(const std::string& cn) { return Make(cn, nullptr, nullptr, /*ca=*/true, false); }

TestKeyPair MakeTestLeaf(const TestKeyPair& ca, const std::string& cn, bool server) {
  std::unique_ptr<BIO, Freer> cert_bio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())));
  std::unique_ptr<BIO, Freer> key_bio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())));
  std::unique_ptr<X509, Freer> ca_cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  std::unique_ptr<EVP_PKEY, Freer> ca_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  Check(ca_cert != nullptr && ca_key != nullptr, "read CA");
  return Make(cn, ca_key.get(), ca_cert.get(), /*ca=*/false, server);
}

}  // namespace liken::testing
