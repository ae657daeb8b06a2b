#include "discovery/pci_ids.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace liken::discovery {
namespace {

// Parses exactly four hex digits at the start of `s`.
bool ParseHex4(std::string_view s, uint16_t* out) {
  if (s.size() < 4) return false;
  uint16_t v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = static_cast<uint16_t>(v * 16 + d);
  }
  *out = v;
  return true;
}

// The name after the ID and its separating spaces, or empty when there is none.
std::string_view NameAfterId(std::string_view line) {
  if (line.size() <= 4) return {};
  std::string_view rest = line.substr(4);
  size_t start = rest.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  return rest.substr(start);
}

// The line starting at `pos` (without '\n' and a trailing '\r'); advances `pos` past it.
std::string_view NextLine(std::string_view text, size_t* pos) {
  size_t end = text.find('\n', *pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(*pos, end - *pos);
  *pos = end + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// A vendor line: four hex digits at column 0 followed by a name.
bool IsVendorLine(std::string_view line, uint16_t* id) {
  return !line.empty() && line[0] != '\t' && line[0] != '#' && ParseHex4(line, id) && !NameAfterId(line).empty();
}

// A device line of a vendor block: one tab, four hex digits, a name.
bool IsDeviceLine(std::string_view line, uint16_t* id) {
  return line.size() > 1 && line[0] == '\t' && line[1] != '\t' && ParseHex4(line.substr(1), id) &&
         !NameAfterId(line.substr(1)).empty();
}

}  // namespace

void PciIdsDatabase::Index() {
  bool in_vendor = false;
  size_t pos = 0;
  while (pos < text_.size()) {
    size_t start = pos;
    std::string_view line = NextLine(text_, &pos);
    if (line.empty() || line[0] == '#') continue;
    uint16_t id;
    if (line[0] != '\t') {
      in_vendor = IsVendorLine(line, &id);  // "C 03  Display controller" ends the vendor section
      if (in_vendor) vendor_lines_.emplace(id, start);
    } else if (in_vendor && IsDeviceLine(line, &id)) {
      ++device_count_;
    }
  }
}

PciIdsDatabase PciIdsDatabase::Parse(std::string_view text) {
  PciIdsDatabase db;
  auto* copy = new std::string(text);
  db.storage_ = std::shared_ptr<const std::string_view>(new std::string_view(*copy), [copy](const std::string_view* v) {
    delete v;
    delete copy;
  });
  db.text_ = *db.storage_;
  db.Index();
  return db;
}

absl::StatusOr<PciIdsDatabase> PciIdsDatabase::Load(const std::string& path) {
  auto fd = OpenRegularFile(path);  // a FIFO or device is refused, never waited on
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return absl::InternalError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  PciIdsDatabase db;
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) return Parse("");
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd->get(), 0);
  fd->Reset();
  if (map == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap ", path, ": ", std::strerror(errno)));
  db.storage_ = std::shared_ptr<const std::string_view>(
      new std::string_view(static_cast<const char*>(map), size), [map, size](const std::string_view* v) {
        ::munmap(map, size);
        delete v;
      });
  db.text_ = *db.storage_;
  db.Index();
  // Indexing touched every page; let them go (they stay in the page cache) so lookups fault in only the
  // vendor blocks they read.
  ::madvise(map, size, MADV_DONTNEED);
  return db;
}

std::optional<std::string> PciIdsDatabase::VendorName(uint16_t vendor) const {
  auto it = vendor_lines_.find(vendor);
  if (it == vendor_lines_.end()) return std::nullopt;
  size_t pos = it->second;
  return std::string(NameAfterId(NextLine(text_, &pos)));
}

std::optional<std::string> PciIdsDatabase::DeviceName(uint16_t vendor, uint16_t device) const {
  const uint32_t key = (static_cast<uint32_t>(vendor) << 16) | device;
  {
    absl::MutexLock lock(&cache_->mu);
    auto hit = cache_->answers.find(key);
    if (hit != cache_->answers.end()) return hit->second;
  }
  std::optional<std::string> name = LookUpDevice(vendor, device);
  absl::MutexLock lock(&cache_->mu);
  cache_->answers.emplace(key, name);
  return name;
}

std::optional<std::string> PciIdsDatabase::LookUpDevice(uint16_t vendor, uint16_t device) const {
  auto it = vendor_lines_.find(vendor);
  if (it == vendor_lines_.end()) return std::nullopt;
  size_t pos = it->second;
  NextLine(text_, &pos);  // the vendor line
  while (pos < text_.size()) {
    std::string_view line = NextLine(text_, &pos);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] != '\t') break;  // the next vendor or section
    uint16_t id;
    if (IsDeviceLine(line, &id) && id == device) return std::string(NameAfterId(line.substr(1)));
  }
  return std::nullopt;
}

}  // namespace liken::discovery
