// libFuzzer target for the text parsers that read untrusted files: uevent, pci.ids, modules.alias,
// mountinfo and swaps. The first byte picks the parser; the rest is its input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "discovery/modules_alias.h"
#include "discovery/pci_ids.h"
#include "discovery/storage_roles.h"
#include "discovery/uevent.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto m = liken::discovery::ParseUevent(input);
      for (const auto& [k, v] : m) {
        if (k.empty()) __builtin_trap();  // the parser promises non-empty keys
      }
      break;
    }
    case 1: {
      auto db = liken::discovery::PciIdsDatabase::Parse(input);
      (void)db.DeviceName(0x8086, 0x5917);
      (void)db.VendorName(0x1002);
      break;
    }
    case 2: {
      size_t split = input.find('\x01');
      std::string alias = input.substr(0, split);
      std::string builtin = split == std::string::npos ? "" : input.substr(split + 1);
      auto db = liken::discovery::ModulesAlias::Parse(alias, builtin);
      (void)db.Match("pci:v00008086d00005917sv000017AAsd0000225Dbc03sc00i00");
      (void)db.Match("usb:v0403p6001d0600dc00dsc00dp00icFFiscFFipFFin00");
      break;
    }
    case 3: {
      liken::discovery::HostStorageFacts facts;
      liken::discovery::ParseMountInfo(input, &facts);
      liken::discovery::ParseSwaps(input, &facts);
      break;
    }
  }
  return 0;
}
