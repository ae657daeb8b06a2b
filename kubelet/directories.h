// Creating the plugin's directories.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace liken::kubelet {

// Creates `path` and its missing parents with mode 0755 (like mkdir -p). FailedPrecondition when `path`
// exists and is not a directory. Thread-safe.
absl::Status MakeDirectories(const std::string& path);

}  // namespace liken::kubelet
