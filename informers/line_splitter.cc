#include "informers/line_splitter.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "informers/kube_client.h"

namespace liken::informers {

absl::Status LineSplitter::TooLong(size_t length) const {
  return LimitExceededError(
      absl::StrCat("a watch event line exceeds ", max_line_bytes_, " bytes (", length, " bytes so far)"));
}

absl::Status LineSplitter::Feed(std::string_view bytes,
                                absl::FunctionRef<absl::Status(std::string_view line)> on_line) {
  if (failed_) return TooLong(pending_.size());
  while (!bytes.empty()) {
    const void* found = std::memchr(bytes.data(), '\n', bytes.size());
    if (found == nullptr) {
      if (pending_.size() + bytes.size() > max_line_bytes_) {
        failed_ = true;
        size_t length = pending_.size() + bytes.size();
        pending_.clear();
        pending_.shrink_to_fit();
        return TooLong(length);
      }
      pending_.append(bytes);
      return absl::OkStatus();
    }
    size_t length = static_cast<size_t>(static_cast<const char*>(found) - bytes.data());
    if (pending_.size() + length > max_line_bytes_) {
      failed_ = true;
      size_t total = pending_.size() + length;
      pending_.clear();
      pending_.shrink_to_fit();
      return TooLong(total);
    }
    std::string_view line;
    if (pending_.empty()) {
      line = bytes.substr(0, length);
    } else {
      pending_.append(bytes.substr(0, length));
      line = pending_;
    }
    bytes.remove_prefix(length + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    absl::Status s = line.empty() ? absl::OkStatus() : on_line(line);
    pending_.clear();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace liken::informers
