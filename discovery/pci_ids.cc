#include "discovery/pci_ids.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

void PciIdsDatabase::Index(std::string_view text) {
  Block* open = nullptr;  // the vendor block being read
  Block duplicate;        // where the lines of a vendor listed again go
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    std::string_view line = NextLine(text, &pos);
    if (line.empty() || line[0] == '#') continue;
    uint16_t id;
    if (line[0] != '\t') {
      if (open != nullptr) open->end = start;
      open = nullptr;
      if (IsVendorLine(line, &id)) {  // "C 03  Display controller" ends the vendor section
        // A vendor listed twice keeps its first block; the second one's devices are still counted.
        auto [it, fresh] = vendor_blocks_.try_emplace(id, Block{start, text.size()});
        open = fresh ? &it->second : &duplicate;
      }
    } else if (open != nullptr && IsDeviceLine(line, &id)) {
      ++device_count_;
    }
  }
}

PciIdsDatabase PciIdsDatabase::Parse(std::string_view text) {
  PciIdsDatabase db;
  auto source = std::make_shared<Source>();
  source->text = std::string(text);
  db.Index(source->text);
  db.source_ = std::move(source);
  return db;
}

absl::StatusOr<PciIdsDatabase> PciIdsDatabase::Load(const std::string& path) {
  auto fd = OpenRegularFile(path);  // a FIFO or device is refused, never waited on
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return absl::InternalError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  PciIdsDatabase db;
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    // Mapped only while indexing: lookups read their vendor's block, so no page of the text stays mapped.
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd->get(), 0);
    if (map == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap ", path, ": ", std::strerror(errno)));
    db.Index(std::string_view(static_cast<const char*>(map), size));
    ::munmap(map, size);
  }
  auto source = std::make_shared<Source>();
  source->file = *std::move(fd);
  db.source_ = std::move(source);
  return db;
}

bool PciIdsDatabase::ScanBlock(const Block& block, const std::function<bool(std::string_view)>& line) const {
  if (source_->file.get() < 0) {
    std::string_view text = std::string_view(source_->text).substr(block.begin, block.end - block.begin);
    for (size_t pos = 0; pos < text.size();) {
      if (line(NextLine(text, &pos))) return true;
    }
    return true;
  }
  constexpr size_t kChunk = 64 << 10;
  std::string buffer;  // read and not yet scanned: the start of a line
  size_t offset = block.begin;
  while (true) {
    const size_t want = std::min(kChunk, block.end - offset);
    const size_t kept = buffer.size();
    buffer.resize(kept + want);
    ssize_t n;
    do {
      n = ::pread(source_->file.get(), buffer.data() + kept, want, static_cast<off_t>(offset));
    } while (n < 0 && errno == EINTR);
    if (n <= 0 && want > 0) return false;  // an error, or the file shrank under its open descriptor
    buffer.resize(kept + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    offset += static_cast<size_t>(std::max<ssize_t>(n, 0));
    const bool last = offset >= block.end;
    const size_t newline = buffer.rfind('\n');
    const size_t complete = last ? buffer.size() : (newline == std::string::npos ? 0 : newline + 1);
    std::string_view lines(buffer.data(), complete);
    for (size_t pos = 0; pos < lines.size();) {
      if (line(NextLine(lines, &pos))) return true;
    }
    if (last) return true;
    buffer.erase(0, complete);
  }
}

std::optional<std::string> PciIdsDatabase::VendorName(uint16_t vendor) const { return Answer(vendor, std::nullopt); }

std::optional<std::string> PciIdsDatabase::DeviceName(uint16_t vendor, uint16_t device) const {
  return Answer(vendor, device);
}

std::optional<std::string> PciIdsDatabase::Answer(uint16_t vendor, std::optional<uint16_t> device) const {
  const uint64_t key = device ? (static_cast<uint64_t>(vendor) << 16 | *device) : (uint64_t{1} << 32 | vendor);
  {
    absl::MutexLock lock(&cache_->mu);
    auto hit = cache_->answers.find(key);
    if (hit != cache_->answers.end()) return hit->second;
  }
  auto it = vendor_blocks_.find(vendor);
  if (it == vendor_blocks_.end()) return std::nullopt;
  std::optional<std::string> name;
  bool vendor_line = true;
  const bool read = ScanBlock(it->second, [&](std::string_view line) {
    if (vendor_line) {  // the block's first line
      vendor_line = false;
      if (!device) name = std::string(NameAfterId(line));
      return !device.has_value();
    }
    uint16_t id;
    if (!IsDeviceLine(line, &id) || id != *device) return false;
    name = std::string(NameAfterId(line.substr(1)));
    return true;
  });
  if (!read) return std::nullopt;  // not remembered: a later read may succeed
  absl::MutexLock lock(&cache_->mu);
  cache_->answers.emplace(key, name);
  return name;
}

}  // namespace liken::discovery
