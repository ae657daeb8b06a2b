#include "informers/client_identity.h"

#include <cstdint>
#include <string>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace liken::informers {
namespace {

// The first OpenSSL error on this thread as text (empty when none), and the thread's queue cleared.
std::string TakeOpenSslError() {
  unsigned long code = ERR_peek_error();
  std::string text;
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    text = buf;
  }
  ERR_clear_error();
  return text;
}

// A read-only memory BIO over `pem`, freed on destruction.
class PemBio {
 public:
  explicit PemBio(std::string_view pem)
      : bio_(pem.size() <= static_cast<size_t>(INT32_MAX) ? BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))
                                                          : nullptr) {}
  ~PemBio() { BIO_free(bio_); }
  PemBio(const PemBio&) = delete;
  PemBio& operator=(const PemBio&) = delete;
  BIO* get() const { return bio_; }

 private:
  BIO* const bio_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const ClientIdentity>> ClientIdentity::FromPem(std::string_view cert_pem,
                                                                               std::string_view key_pem) {
  ERR_clear_error();
  PemBio cert_bio(cert_pem);
  PemBio key_bio(key_pem);
  if (cert_bio.get() == nullptr || key_bio.get() == nullptr) {
    return absl::InvalidArgumentError("the client certificate or key is too large");
  }
  X509* cert = PEM_read_bio_X509_AUX(cert_bio.get(), nullptr, nullptr, nullptr);
  if (cert == nullptr) {
    return absl::InvalidArgumentError("the client certificate is not a PEM certificate: " + TakeOpenSslError());
  }
  STACK_OF(X509)* chain = sk_X509_new_null();
  EVP_PKEY* key = nullptr;
  auto fail = [&](std::string message) -> absl::Status {
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    return absl::InvalidArgumentError(std::move(message));
  };
  if (chain == nullptr) return fail("cannot allocate the client certificate chain");
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    if (sk_X509_push(chain, extra) == 0) {
      X509_free(extra);
      return fail("cannot allocate the client certificate chain");
    }
  }
  // The end of the data reads as "no start line"; anything else is a broken certificate in the chain.
  const unsigned long end = ERR_peek_last_error();
  if (end != 0 && !(ERR_GET_LIB(end) == ERR_LIB_PEM && ERR_GET_REASON(end) == PEM_R_NO_START_LINE)) {
    return fail("the client certificate chain holds a broken certificate: " + TakeOpenSslError());
  }
  ERR_clear_error();
  key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) return fail("the client key is not a PEM private key: " + TakeOpenSslError());
  if (X509_check_private_key(cert, key) != 1) {
    ERR_clear_error();
    return fail("the client key does not belong to the client certificate");
  }
  return std::shared_ptr<const ClientIdentity>(new ClientIdentity(cert, chain, key));
}

ClientIdentity::~ClientIdentity() {
  X509_free(cert_);
  sk_X509_pop_free(chain_, X509_free);
  EVP_PKEY_free(key_);
}

absl::Status ClientIdentity::ApplyTo(SSL_CTX* ctx) const {
  // Each call takes its own references; the context frees them.
  if (SSL_CTX_use_certificate(ctx, cert_) != 1 || SSL_CTX_set1_chain(ctx, chain_) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key_) != 1) {
    return absl::InternalError("OpenSSL refused the client certificate or key: " + TakeOpenSslError());
  }
  return absl::OkStatus();
}

std::string ClientIdentity::Subject() const { return SubjectOf(cert_); }

std::string SubjectOf(const X509* cert) {
  if (cert == nullptr) return "";
  BIO* out = BIO_new(BIO_s_mem());
  if (out == nullptr) return "";
  X509_NAME_print_ex(out, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long n = BIO_get_mem_data(out, &data);
  std::string subject(data, n > 0 ? static_cast<size_t>(n) : 0);
  BIO_free(out);
  return subject;
}

}  // namespace liken::informers
