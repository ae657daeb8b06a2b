// The PCI ID database (pci.ids): vendor and device names by numeric ID.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace liken::discovery {

// An immutable pci.ids. The text stays where it is (a read-only mapping of the file, shared with the page
// cache) and only the offset of each vendor's block is indexed, so a node agent holds ~100 kB, not megabytes;
// a lookup scans one vendor's device lines. Thread-safe after construction (read-only).
class PciIdsDatabase {
 public:
  // Indexes pci.ids text (copied). Malformed lines are skipped; never fails. Thread-safe.
  static PciIdsDatabase Parse(std::string_view text);

  // Maps and indexes the file at `path`. NotFound/PermissionDenied when it cannot be read. Thread-safe.
  static absl::StatusOr<PciIdsDatabase> Load(const std::string& path);

  // The vendor's name, if known.
  std::optional<std::string> VendorName(uint16_t vendor) const;

  // The device's name (without the vendor), if known. Answers are remembered: a machine asks about the same
  // few devices on every scan. Thread-safe.
  std::optional<std::string> DeviceName(uint16_t vendor, uint16_t device) const;

  // Number of device entries (for tests and diagnostics).
  size_t device_count() const { return device_count_; }

 private:
  void Index();
  std::optional<std::string> LookUpDevice(uint16_t vendor, uint16_t device) const;

  std::shared_ptr<const std::string_view> storage_;  // owns the text (a copy or a mapping) via its deleter
  std::string_view text_;
  std::unordered_map<uint16_t, size_t> vendor_lines_;  // vendor ID → offset of its line in text_
  size_t device_count_ = 0;
  // Answers given so far (vendor << 16 | device → name or nullopt); shared by copies of this database.
  struct AnswerCache {
    absl::Mutex mu;
    std::unordered_map<uint32_t, std::optional<std::string>> answers ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<AnswerCache> cache_ = std::make_shared<AnswerCache>();
};

}  // namespace liken::discovery
