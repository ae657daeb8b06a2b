// Splits a byte stream (a watch response) into lines, holding at most a bounded unfinished line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace liken::informers {

// Cuts bytes fed in pieces of any size into '\n'-ended lines. Each byte is looked at once (an endless
// line costs linear time), and an unfinished line longer than the limit is an error, not more memory.
// Thread-compatible.
class LineSplitter {
 public:
  // `max_line_bytes` (> 0): the longest line accepted, without its '\n'.
  explicit LineSplitter(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Appends `bytes`; calls `on_line` for each line completed, in order, without its '\n' and a trailing
  // '\r'; empty lines are skipped. Returns the first error of `on_line` (the rest of `bytes` is dropped), or
  // LimitExceededError when a line grows past the limit (the splitter then refuses all further input).
  absl::Status Feed(std::string_view bytes, absl::FunctionRef<absl::Status(std::string_view line)> on_line);

  // Bytes of the unfinished line held. Thread-compatible.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  absl::Status TooLong(size_t length) const;

  const size_t max_line_bytes_;
  std::string pending_;  // the unfinished line; never holds a '\n'
  bool failed_ = false;
};

}  // namespace liken::informers
