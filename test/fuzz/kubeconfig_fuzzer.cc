// libFuzzer target for the kubeconfig loader: the input is the kubeconfig's text; files it names read as a
// fixed certificate (or a token), so no input reaches the file system. What loads is then checked as the
// daemon checks it before it connects (URL, TLS material through OpenSSL).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "informers/kube_config.h"
#include "informers/rest_client.h"
#include "test/informers/test_certificate.h"

namespace {

absl::StatusOr<std::string> ReadFixed(const std::string& path) {
  if (path.find("missing") != std::string::npos) return absl::NotFoundError("no such file");
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, "token") == 0) return std::string("tok\n");
  return std::string(::liken::testing::kTestCertPem);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = liken::informers::ParseKubeconfig(text, "/fuzz/config", "", ReadFixed);
  if (!config.ok()) {
    if (config.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  if (config->server.empty()) __builtin_trap();  // the loader promises a server
  absl::Status valid = liken::informers::ValidateKubeConfig(*config);
  if (!valid.ok() && valid.code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
  return 0;
}
