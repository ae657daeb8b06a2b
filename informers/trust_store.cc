#include "informers/trust_store.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>


namespace liken::informers {

absl::StatusOr<std::shared_ptr<const TrustStore>> TrustStore::FromPem(std::string_view ca_pem) {
  if (ca_pem.size() > static_cast<size_t>(INT32_MAX)) return absl::InvalidArgumentError("CA bundle too large");
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  if (bio == nullptr) return absl::ResourceExhaustedError("cannot allocate a buffer for the CA bundle");
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr) {
    BIO_free(bio);
    return absl::ResourceExhaustedError("cannot allocate a certificate store");
  }
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  ERR_clear_error();  // the end of the PEM data reads as an error
  BIO_free(bio);
  if (added == 0) {
    X509_STORE_free(store);
    return absl::InvalidArgumentError("the certificate authority data holds no PEM certificate");
  }
  return std::shared_ptr<const TrustStore>(new TrustStore(store));
}

TrustStore::~TrustStore() { X509_STORE_free(store_); }

void TrustStore::ApplyTo(SSL_CTX* ctx) const { SSL_CTX_set1_cert_store(ctx, store_); }

int TrustStore::size() const {
  // X509_STORE_get0_objects is not safe against concurrent additions; this store is never added to after FromPem.
  return sk_X509_OBJECT_num(X509_STORE_get0_objects(store_));
}

}  // namespace liken::informers
