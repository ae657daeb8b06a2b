// The PCI ID database (pci.ids): vendor and device names by numeric ID.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/files.h"

namespace liken::discovery {

// An immutable pci.ids. Only where each vendor's block of lines begins and ends is indexed (~100 kB for a
// node agent, not the megabytes of the text). A database loaded from a file keeps the file open and reads one
// vendor's block when a name is asked for the first time: the text is never kept in memory nor mapped. Answers
// are remembered (a machine asks about the same few devices on every scan). Thread-safe after construction.
class PciIdsDatabase {
 public:
  // Indexes pci.ids text (copied). Malformed lines are skipped; never fails. Thread-safe.
  static PciIdsDatabase Parse(std::string_view text);

  // Indexes the file at `path` and keeps it open for lookups. NotFound/PermissionDenied when it cannot be
  // read. Thread-safe.
  static absl::StatusOr<PciIdsDatabase> Load(const std::string& path);

  // The vendor's name, if known (nullopt also when the file cannot be read any more). Thread-safe.
  std::optional<std::string> VendorName(uint16_t vendor) const;

  // The device's name (without the vendor), if known (nullopt also when the file cannot be read any more).
  // Thread-safe.
  std::optional<std::string> DeviceName(uint16_t vendor, uint16_t device) const;

  // Number of device entries (for tests and diagnostics).
  size_t device_count() const { return device_count_; }

 private:
  // A vendor's lines, its own line first: [begin, end) of the text.
  struct Block {
    size_t begin = 0;
    size_t end = 0;
  };
  // The text, in memory (Parse) or in an open file (Load).
  struct Source {
    std::string text;
    ScopedFd file;
  };

  void Index(std::string_view text);
  // Calls `line` with each line of `block` (no '\n') until it returns true. A file is read 64 kB at a time, so a
  // hit early in a large block (Intel's is 370 kB) reads little of it. False when the file cannot be read.
  bool ScanBlock(const Block& block, const std::function<bool(std::string_view line)>& line) const;
  // Looks up (vendor << 16 | device), or the vendor's own name when `device` is nullopt; remembers the answer.
  std::optional<std::string> Answer(uint16_t vendor, std::optional<uint16_t> device) const;

  std::shared_ptr<const Source> source_;
  std::unordered_map<uint16_t, Block> vendor_blocks_;
  size_t device_count_ = 0;
  // Answers given so far (vendor << 16 | device, or vendor | 1 << 32 for its name → name or nullopt); shared by
  // copies of this database.
  struct AnswerCache {
    absl::Mutex mu;
    std::unordered_map<uint64_t, std::optional<std::string>> answers ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<AnswerCache> cache_ = std::make_shared<AnswerCache>();
};

}  // namespace liken::discovery
