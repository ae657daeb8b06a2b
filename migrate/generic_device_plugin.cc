#include "migrate/generic_device_plugin.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apis/resource_slice.h"
#include "migrate/plugin_glob.h"

namespace liken::migrate {
namespace {

using discovery::PublishedDevice;

// Nodes the kernel makes with no hardware behind them (devices/virtual): liken never publishes them.
constexpr const char* kVirtualNodes[] = {
    "/dev/fuse",   "/dev/cuse",         "/dev/net/tun",     "/dev/kvm",         "/dev/null",
    "/dev/zero",   "/dev/full",         "/dev/random",      "/dev/urandom",     "/dev/tty",
    "/dev/console", "/dev/ptmx",        "/dev/uinput",      "/dev/uhid",        "/dev/loop-control",
    "/dev/vhost-net", "/dev/vhost-vsock", "/dev/vfio/vfio", "/dev/mem",         "/dev/kmsg",
    "/dev/autofs", "/dev/btrfs-control", "/dev/mapper/control", "/dev/rfkill", "/dev/userfaultfd",
    "/dev/ppp",    "/dev/snapshot",     "/dev/hwrng"};

constexpr char kDefaultDomain[] = "squat.ai";

// Whether the plugin's glob of `pattern` (cleaned, as PlanGroup leaves it) finds `path`.
bool GlobMatches(const std::string& pattern, const std::string& path) { return PluginGlobFinds(pattern, path); }

bool HasGlob(const std::string& pattern) { return PluginGlobHasMeta(pattern); }

// Paths udev makes as links: by-id, by-path and the like.
bool IsUdevLinkPath(const std::string& path) {
  for (const char* part : {"/by-id/", "/by-path/", "/by-uuid/", "/by-label/", "/by-partuuid/", "/by-name/"}) {
    if (absl::StrContains(path, part)) return true;
  }
  return absl::StartsWith(path, "/dev/serial/") || absl::StartsWith(path, "/dev/disk/") ||
         absl::StartsWith(path, "/dev/v4l/");
}

std::optional<std::string> VirtualNodeMatching(const std::string& pattern) {
  for (const char* v : kVirtualNodes) {
    if (GlobMatches(pattern, v) || absl::StartsWith(v, pattern + "/")) return std::string(v);
  }
  return std::nullopt;
}

std::optional<std::string> StringAttribute(const PublishedDevice& d, const std::string& name) {
  auto it = d.attributes.find(absl::StrCat(discovery::kDriverName, "/", name));
  if (it == d.attributes.end()) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return std::nullopt;
}

bool BoolAttribute(const PublishedDevice& d, const std::string& name) {
  auto it = d.attributes.find(absl::StrCat(discovery::kDriverName, "/", name));
  if (it == d.attributes.end()) return false;
  const auto* b = std::get_if<bool>(&it->second);
  return b != nullptr && *b;
}

// A CEL string literal's body.
std::string CelEscape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// What a class selects one device by: stable attributes, and the address or serial only where needed.
struct Selector {
  std::optional<std::string> vendor, product, subsystem, address, serial;
  bool render_node = false, display_node = false;
  bool pin_address = false, pin_serial = false;

  static Selector Of(const PublishedDevice& d) {
    Selector s;
    s.vendor = StringAttribute(d, "vendor");
    s.product = StringAttribute(d, "product");
    s.subsystem = StringAttribute(d, "subsystem");
    s.address = StringAttribute(d, "address");
    s.serial = StringAttribute(d, "serial");
    s.render_node = BoolAttribute(d, "renderNode");
    s.display_node = BoolAttribute(d, "displayNode");
    return s;
  }
  bool Selects(const PublishedDevice& d) const {
    Selector o = Of(d);
    return vendor == o.vendor && product == o.product && subsystem == o.subsystem && render_node == o.render_node &&
           display_node == o.display_node && (!pin_address || address == o.address) &&
           (!pin_serial || serial == o.serial);
  }
  std::string Cel() const {
    auto attr = [](const char* name) { return absl::StrCat("device.attributes[\"", discovery::kDriverName, "\"].", name); };
    std::vector<std::string> terms;
    // Every read is guarded by has(): reading an attribute a device lacks is a CEL error, which fails the
    // allocation instead of skipping the device.
    auto eq = [&](const char* name, const std::optional<std::string>& v) {
      terms.push_back(v ? absl::StrCat("has(", attr(name), ") && ", attr(name), " == \"", CelEscape(*v), "\"")
                        : absl::StrCat("!has(", attr(name), ")"));
    };
    eq("vendor", vendor);
    eq("product", product);
    eq("subsystem", subsystem);
    if (render_node) terms.push_back(absl::StrCat("has(", attr("renderNode"), ") && ", attr("renderNode")));
    if (display_node) terms.push_back(absl::StrCat("has(", attr("displayNode"), ") && ", attr("displayNode")));
    if (pin_address) eq("address", address);
    if (pin_serial) eq("serial", serial);
    return absl::StrCat("(", absl::StrJoin(terms, " && "), ")");
  }
};

std::string GroupInWords(const PluginGroup& g) {
  std::vector<std::string> parts;
  for (const auto& p : g.paths) {
    std::string s = p.path;
    if (p.type != "Device") absl::StrAppend(&s, " (type ", p.type, ")");
    if (p.optional) absl::StrAppend(&s, " (optional)");
    parts.push_back(std::move(s));
  }
  for (const auto& u : g.usb) {
    parts.push_back(absl::StrCat("usb ", u.vendor, ":", u.product, u.serial.empty() ? "" : absl::StrCat(" serial ", u.serial)));
  }
  std::string s = parts.empty() ? "(nothing)" : absl::StrJoin(parts, " + ");
  if (g.count > 1) absl::StrAppend(&s, ", count ", g.count);
  return s;
}

// One node's devices, indexed by the /dev entries that lead to them.
struct NodeIndex {
  const NodeDevices* node = nullptr;
  std::map<std::string, std::vector<const PublishedDevice*>> delivering;  // node path -> devices delivering it
  std::vector<std::string> universe;  // node paths and link paths, sorted

  explicit NodeIndex(const NodeDevices& n) : node(&n) {
    std::set<std::string> all;
    for (const auto& d : n.published) {
      for (const auto& node_path : d.nodes) {
        auto& v = delivering[node_path.path];
        if (std::find(v.begin(), v.end(), &d) == v.end()) v.push_back(&d);
        all.insert(node_path.path);
      }
    }
    for (const auto& [link, target] : n.links) all.insert(link);
    universe.assign(all.begin(), all.end());
  }

  // The entries a glob finds here, sorted as Go sorts them: a node, a link, or a directory above them.
  std::vector<std::string> Entries(const std::string& pattern) const {
    std::set<std::string> out;
    for (const auto& u : universe) {
      if (GlobMatches(pattern, u)) {
        out.insert(u);
        continue;
      }
      for (size_t slash = u.find('/', 1); slash != std::string::npos; slash = u.find('/', slash + 1)) {
        const std::string dir = u.substr(0, slash);
        if (GlobMatches(pattern, dir)) {
          out.insert(dir);
          break;
        }
      }
    }
    return {out.begin(), out.end()};
  }

  // Calls `visit` with each node path an entry stands for (itself, a link's target, everything under a
  // directory), in the universe's order.
  template <typename Visit>
  void ForEachNodePath(const std::string& entry, Visit visit) const {
    auto resolve = [&](const std::string& path) {
      auto l = node->links.find(path);
      visit(delivering.count(path) || l == node->links.end() ? path : l->second);
    };
    if (delivering.count(entry) || node->links.count(entry)) {
      resolve(entry);
      return;
    }
    for (const auto& u : universe) {
      if (absl::StartsWith(u, entry + "/")) resolve(u);
    }
  }

  // The devices an entry delivers, each once, in the order their nodes are met.
  std::vector<const PublishedDevice*> DevicesOf(const std::string& entry) const {
    std::vector<const PublishedDevice*> out;
    ForEachNodePath(entry, [&](const std::string& path) {
      auto it = delivering.find(path);
      if (it == delivering.end()) return;
      for (const auto* d : it->second) {
        if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
      }
    });
    return out;
  }

  // The node paths an entry stands for.
  std::set<std::string> NodePathsOf(const std::string& entry) const {
    std::set<std::string> out;
    ForEachNodePath(entry, [&](const std::string& path) { out.insert(path); });
    return out;
  }
};

std::vector<std::string> Names(const std::vector<const PublishedDevice*>& devices) {
  std::vector<std::string> names;
  for (const auto* d : devices) names.push_back(d->name);
  std::sort(names.begin(), names.end());
  return names;
}

// What one group does on one node.
struct NodeResult {
  bool moves = false;
  std::string reason;
  std::vector<const PublishedDevice*> named;  // every device the group's entries lead to here, moved or not
  std::vector<const PublishedDevice*> moved;  // the devices a class must select here
  std::vector<std::string> notes;
};

void AddUnique(std::vector<const PublishedDevice*>* v, const PublishedDevice* d) {
  if (std::find(v->begin(), v->end(), d) == v->end()) v->push_back(d);
}

// Why nothing here matches `pattern`.
std::string NoMatchReason(const std::string& pattern, const NodeIndex& index) {
  if (IsUdevLinkPath(pattern)) {
    if (!index.node->links_unknown.empty()) {
      return absl::StrCat(pattern, " is a udev link, and ", index.node->links_unknown);
    }
    return absl::StrCat("udev link ", pattern,
                        " resolves to nothing here: no such link under /dev, and no DEVLINKS in the udev database "
                        "names it");
  }
  return absl::StrCat("no published device delivers a node matching ", pattern);
}

NodeResult PlanPathGroup(const PluginGroup& group, const NodeIndex& index) {
  NodeResult r;
  std::vector<std::vector<std::string>> entries(group.paths.size());
  std::vector<bool> has_matches(group.paths.size(), true);
  for (size_t k = 0; k < group.paths.size(); ++k) {
    const auto& p = group.paths[k];
    entries[k] = index.Entries(p.path);
    if (entries[k].empty()) {
      if (p.optional) {
        has_matches[k] = false;
        r.notes.push_back(absl::StrCat("optional ", p.path, ": nothing here delivers it"));
        continue;
      }
      r.reason = NoMatchReason(p.path, index);
      return r;
    }
    // A link (or a directory of links) whose nodes no published device delivers: a glob's other matches still
    // move; an exact path cannot.
    std::vector<std::string> delivered;
    std::string why;
    for (const auto& e : entries[k]) {
      if (!index.DevicesOf(e).empty()) {
        delivered.push_back(e);
        continue;
      }
      auto target = index.node->links.find(e);
      if (target != index.node->links.end() && !index.delivering.count(e)) {
        why = absl::StrCat("udev link ", e, " names ", target->second, ", which no published device delivers");
      } else {
        why = absl::StrCat(e, " leads to no node a published device delivers");
      }
      if (entries[k].size() > 1) r.notes.push_back(absl::StrCat("not moved: ", why));
    }
    if (delivered.empty()) {
      r.reason = why;
      return r;
    }
    entries[k] = std::move(delivered);
  }
  // The plugin's units: the i-th match of every path, each path's matches repeated `limit` times, as many units
  // as the most matches of one path, capped by the fewest repeated matches.
  size_t length = 0, limit_length = SIZE_MAX;
  for (size_t k = 0; k < group.paths.size(); ++k) {
    if (!has_matches[k]) continue;
    length = std::max(length, entries[k].size());
    limit_length = std::min(limit_length, entries[k].size() * group.paths[k].limit);
  }
  length = std::min(length, limit_length);
  std::set<std::string> named_paths;
  std::map<const PublishedDevice*, size_t> units_per_device;
  for (size_t i = 0; i < length; ++i) {
    std::vector<const PublishedDevice*> unit_devices;
    size_t unit_entries = 0;
    std::string dir_entry;
    for (size_t k = 0; k < group.paths.size(); ++k) {
      if (!has_matches[k]) continue;
      const std::string& e = entries[k][i % entries[k].size()];
      ++unit_entries;
      for (const auto* d : index.DevicesOf(e)) AddUnique(&unit_devices, d);
      for (const auto& n : index.NodePathsOf(e)) named_paths.insert(n);
      if (!index.delivering.count(e) && !index.node->links.count(e)) dir_entry = e;
    }
    for (const auto* d : unit_devices) AddUnique(&r.named, d);
    if (unit_devices.size() > 1) {
      if (unit_entries > 1) {
        r.reason = absl::StrCat("its paths are delivered by ", unit_devices.size(), " published devices (",
                                absl::StrJoin(Names(unit_devices), ", "),
                                "), and a claim's request gets one device: the group cannot stay one unit");
        return r;
      }
      r.notes.push_back(absl::StrCat("the plugin gave ", dir_entry.empty() ? "the match" : dir_entry,
                                     " as one unit, which holds ", unit_devices.size(), " devices here (",
                                     absl::StrJoin(Names(unit_devices), ", "), "); a claim gets one of them"));
    }
    if (!dir_entry.empty()) {
      r.notes.push_back(absl::StrCat("the plugin gave everything under ", dir_entry,
                                     "; a claim gives its device's nodes only, not the virtual ones there"));
    }
    for (const auto* d : unit_devices) ++units_per_device[d];
  }
  size_t units = 0;
  for (const auto& [d, n] : units_per_device) units += n;
  if (units > units_per_device.size() && units_per_device.size() == 1) {
    r.notes.push_back(absl::StrCat("the plugin offered ", units, " units here (one per match), all on ",
                                   units_per_device.begin()->first->name, ", which a claim takes whole"));
  } else if (units > units_per_device.size()) {
    r.notes.push_back(absl::StrCat("the plugin offered ", units, " units here (one per match) on ",
                                   units_per_device.size(), " devices; a claim takes a device whole"));
  }
  r.moved = r.named;
  // What a claim delivers beyond the group's own nodes: the whole published device.
  for (const auto* d : r.moved) {
    std::vector<std::string> extra;
    for (const auto& n : d->nodes) {
      if (!named_paths.count(n.path)) extra.push_back(n.path);
    }
    if (!extra.empty()) r.notes.push_back(absl::StrCat(d->name, " also delivers ", absl::StrJoin(extra, " ")));
  }
  r.moves = true;
  return r;
}

NodeResult PlanUsbGroup(const PluginGroup& group, const NodeIndex& index) {
  NodeResult r;
  std::vector<std::string> missing;
  std::set<std::string> addresses;  // physical devices, by USB port path
  size_t specs_matched = 0;
  std::map<std::string, std::set<std::string>> addresses_of_spec;
  for (const auto& u : group.usb) {
    const std::string id = absl::StrCat(u.vendor, ":", u.product, u.serial.empty() ? "" : absl::StrCat(" serial ", u.serial));
    bool any = false;
    for (const auto& d : index.node->published) {
      if (StringAttribute(d, "bus") != "usb" || StringAttribute(d, "vendor") != u.vendor ||
          StringAttribute(d, "product") != u.product) {
        continue;
      }
      if (!u.serial.empty() && StringAttribute(d, "serial") != u.serial) continue;
      AddUnique(&r.named, &d);
      const std::string address = StringAttribute(d, "address").value_or(d.name);
      addresses.insert(address);
      addresses_of_spec[id].insert(address);
      any = true;
    }
    if (any) {
      ++specs_matched;
    } else {
      missing.push_back(id);
    }
  }
  if (specs_matched == 0) {
    r.reason = absl::StrCat("no published device has USB ID ", absl::StrJoin(missing, " or "));
    return r;
  }
  for (const auto& m : missing) {
    r.notes.push_back(absl::StrCat("usb ", m, ": no published device here; the plugin's unit holds the others"));
  }
  // One physical device that liken publishes as several interfaces (a webcam's video and audio, an FT2232's two
  // ports): the plugin gave the whole device, through its usbfs node, to one pod; a claim for the extended resource
  // gets one interface, and another claim may hold another interface, with the same usbfs node, at once.
  std::map<std::string, std::vector<const PublishedDevice*>> interfaces;  // address -> published devices
  for (const auto* d : r.named) interfaces[StringAttribute(*d, "address").value_or(d->name)].push_back(d);
  for (const auto& [address, devices] : interfaces) {
    if (devices.size() < 2) continue;
    std::set<std::string> usbfs;
    std::vector<std::string> parts;
    for (const auto* d : devices) {
      std::vector<std::string> own;
      for (const auto& n : d->nodes) {
        if (absl::StartsWith(n.path, "/dev/bus/usb/")) {
          usbfs.insert(n.path);
        } else {
          own.push_back(n.path);
        }
      }
      parts.push_back(absl::StrCat(d->name, own.empty() ? "" : absl::StrCat(" (", absl::StrJoin(own, " "), ")")));
    }
    r.reason = absl::StrCat(
        "the plugin gave the whole USB device at ", address,
        usbfs.empty() ? "" : absl::StrCat(" (its usbfs node ", absl::StrJoin(usbfs, " "), ")"),
        " to one pod; liken publishes its ", devices.size(), " interfaces as devices: ", absl::StrJoin(parts, ", "),
        ". A claim for the extended resource gets one of them, and another claim may hold another interface of the "
        "same device, usbfs node included, at once; to keep the device whole, claim it with a ResourceClaim that has "
        "one request per interface and a matchAttribute constraint on liken.sh/address");
    return r;
  }
  if (addresses.size() > 1) {
    std::vector<std::string> a(addresses.begin(), addresses.end());
    if (specs_matched > 1) {
      r.reason = absl::StrCat("its USB IDs are ", addresses.size(), " devices here (at ", absl::StrJoin(a, ", "),
                              "), and a claim's request gets one device: the group cannot stay one unit");
      return r;
    }
    r.notes.push_back(absl::StrCat("the plugin gave all ", addresses.size(), " devices with this USB ID (at ",
                                   absl::StrJoin(a, ", "), ") as one unit; a claim gets one of them"));
  }
  r.moved = r.named;
  for (const auto* d : r.moved) {
    std::vector<std::string> extra;
    for (const auto& n : d->nodes) {
      if (!absl::StartsWith(n.path, "/dev/bus/usb/")) extra.push_back(n.path);
    }
    if (!extra.empty()) r.notes.push_back(absl::StrCat(d->name, " also delivers ", absl::StrJoin(extra, " ")));
  }
  r.moves = true;
  return r;
}

void CheckSharing(const PluginGroup& group, NodeResult* r) {
  if (!r->moves) return;
  for (const auto* d : r->moved) {
    if (group.count > 1 && !d->allow_multiple_allocations) {
      r->moves = false;
      r->reason = absl::StrCat("count ", group.count, ", but ", d->name,
                               " is not shareable: liken allocates it to one claim at a time");
      return;
    }
  }
  for (const auto* d : r->moved) {
    if (!d->allow_multiple_allocations) continue;
    r->notes.push_back(group.count > 1
                           ? absl::StrCat("count ", group.count, ": ", d->name,
                                          " is shareable, so any number of claims hold it at once")
                           : absl::StrCat("count 1 made it exclusive in the plugin; ", d->name,
                                          " is shareable, so any number of claims hold it at once"));
  }
}

// Notes that do not depend on the node: what the plugin does with the group that a claim does not.
std::vector<std::string> GroupNotes(const PluginGroup& group) {
  std::vector<std::string> notes = group.notes;
  for (const auto& p : group.paths) {
    if (!p.mount_path.empty() && p.mount_path != p.path) {
      notes.push_back(absl::StrCat("mountPath ", p.mount_path, " is not honoured: the node appears at its host path"));
    }
    std::string perms = p.permissions;
    std::sort(perms.begin(), perms.end());
    perms.erase(std::unique(perms.begin(), perms.end()), perms.end());
    if (perms != "mrw") {
      notes.push_back(absl::StrCat("permissions '", p.permissions, "' on ", p.path,
                                   " are not kept: a claim's nodes are readable and writable (rwm)"));
    }
    if (p.read_only) {
      notes.push_back(absl::StrCat("readOnly on ", p.path,
                                   " is not kept: the plugin applies it to mounts only, and a claim has none"));
    }
    if (p.limit > 1) {
      notes.push_back(absl::StrCat("limit ", p.limit, " on ", p.path,
                                   " is not kept: a claim takes its device whole, and only a shareable device "
                                   "goes to more than one claim"));
    }
  }
  return notes;
}

// Refusals that do not depend on the node.
std::string GroupRefusal(const PluginGroup& group) {
  if (!group.refusal.empty()) return group.refusal;
  for (const auto& p : group.paths) {
    if (p.type == "Mount") {
      return absl::StrCat(p.path, " has type Mount: a mount is not a device node, and a claim delivers device nodes "
                                  "only; keep the plugin for this group");
    }
    if (p.type != "Device") {
      return absl::StrCat(p.path, " has type '", p.type, "', which is neither Device nor Mount: the plugin delivers "
                                  "nothing for it");
    }
  }
  for (const auto& p : group.paths) {
    if (!HasGlob(p.path) && !p.path.empty()) {
      if (auto v = VirtualNodeMatching(p.path)) {
        return absl::StrCat(p.path, " is a virtual node", *v == p.path ? "" : absl::StrCat(" (", *v, ")"),
                            ": no hardware is behind it, and liken delivers only the nodes of PCI and USB devices; "
                            "keep the device plugin for it");
      }
    }
  }
  return "";
}

struct Planned {
  GroupOutcome outcome;
  std::vector<Selector> selectors;
};

// The group with each path as the plugin globs it (cleaned: "/dev/snd/" is "/dev/snd"), a note where that is not
// the text, and a refusal where the plugin's glob fails on a path.
PluginGroup AsThePluginGlobs(const PluginGroup& written, const std::string& resource) {
  PluginGroup group = written;
  for (auto& p : group.paths) {
    auto pattern = PluginGlobPattern(p.path);
    if (!pattern.ok()) {
      if (group.refusal.empty()) {
        group.refusal = absl::StrCat("the plugin cannot glob ", p.path, " (", pattern.status().message(),
                                     "): it fails to discover the devices of ", resource, ", every group");
      }
      continue;
    }
    if (*pattern != p.path) {
      group.notes.push_back(absl::StrCat("the plugin reads ", p.path, " as ", *pattern));
      p.path = *pattern;
    }
  }
  return group;
}

Planned PlanGroup(const PluginDevice& device, size_t g, const std::vector<NodeIndex>& indexes, bool several) {
  const PluginGroup group = AsThePluginGlobs(device.groups[g], device.name);
  Planned planned;
  GroupOutcome& out = planned.outcome;
  out.resource = device.name;
  out.index = g;
  out.what = GroupInWords(device.groups[g]);
  out.reason = GroupRefusal(group);
  out.notes = group.notes;  // how the plugin reads what was written matters most when nothing moves
  if (!out.reason.empty()) return planned;
  std::vector<NodeResult> results;
  for (const auto& index : indexes) {
    NodeResult r = group.usb.empty() ? PlanPathGroup(group, index) : PlanUsbGroup(group, index);
    // A glob that matched nothing may name a virtual node the plugin serves.
    if (!r.moves && r.named.empty()) {
      for (const auto& p : group.paths) {
        if (index.Entries(p.path).empty() && !p.optional) {
          if (auto v = VirtualNodeMatching(p.path)) {
            out.reason = absl::StrCat(p.path, " matches virtual node ", *v,
                                      ": no hardware is behind it, and liken delivers only the nodes of PCI and USB "
                                      "devices; keep the device plugin for it");
            return planned;
          }
        }
      }
    }
    CheckSharing(group, &r);
    results.push_back(std::move(r));
  }
  // Pins: what the group itself names (a serial, a port), then whatever keeps the class off devices it does not.
  bool force_serial = false, force_address = false;
  for (const auto& u : group.usb) force_serial = force_serial || !u.serial.empty();
  for (const auto& p : group.paths) {
    // One by-path link names one port; a glob over links names any of them.
    force_address = force_address || (absl::StrContains(p.path, "/by-path/") && !HasGlob(p.path));
  }
  // Per node, the devices an exact path names by an identity of its own: a by-id link (the adapter's serial is in its
  // name: pinned by serial, or refused where the device publishes none) and a kernel name such as /dev/ttyUSB0
  // (nothing keeps it: pinned to the address of the device that had it, with a note every time).
  std::vector<std::map<const PublishedDevice*, std::string>> by_id(indexes.size()), kernel_name(indexes.size());
  for (size_t n = 0; n < indexes.size(); ++n) {
    if (!results[n].moves) continue;
    const NodeIndex& index = indexes[n];
    for (const auto& p : group.paths) {
      if (HasGlob(p.path)) continue;
      auto link = index.node->links.find(p.path);
      const bool is_link = link != index.node->links.end() && !index.delivering.count(p.path);
      if (absl::StrContains(p.path, "/by-id/") && is_link) {
        for (const auto* d : index.DevicesOf(p.path)) by_id[n].emplace(d, p.path);
      } else if (!is_link && !IsUdevLinkPath(p.path) && index.delivering.count(p.path)) {
        for (const auto* d : index.delivering.at(p.path)) kernel_name[n].emplace(d, p.path);
      }
    }
  }
  auto outsider = [&](const Selector& s) -> std::optional<std::pair<size_t, const PublishedDevice*>> {
    for (size_t m = 0; m < indexes.size(); ++m) {
      for (const auto& o : indexes[m].node->published) {
        const auto& moved = results[m].moves ? results[m].moved : std::vector<const PublishedDevice*>{};
        if (std::find(moved.begin(), moved.end(), &o) != moved.end()) continue;
        if (s.Selects(o)) return std::make_pair(m, &o);
      }
    }
    return std::nullopt;
  };
  auto node_name = [&](size_t n) { return indexes[n].node->node.empty() ? std::string("this node") : indexes[n].node->node; };
  std::vector<std::string> pin_notes;
  for (size_t n = 0; n < indexes.size(); ++n) {
    if (!results[n].moves) continue;
    const std::string where = several ? absl::StrCat(" on ", node_name(n)) : " here";
    for (const auto* d : results[n].moved) {
      Selector s = Selector::Of(*d);
      if (auto link = by_id[n].find(d); link != by_id[n].end() && !s.serial) {
        out.reason = absl::StrCat(
            "udev link ", link->second, " names ", d->name, where,
            ", which publishes no serial (the device has none, or one over 64 bytes): the link's name is the "
            "adapter's identity and no attribute holds it, so a class would select every adapter of its model; "
            "keep the plugin for it, or name the adapter by USB ID and a serial it publishes");
        out.nodes.clear();
        planned.selectors.clear();
        return planned;
      }
      s.pin_serial = (force_serial || by_id[n].count(d)) && s.serial.has_value();
      s.pin_address = force_address && s.address.has_value();
      if (auto name = kernel_name[n].find(d); name != kernel_name[n].end()) {
        s.pin_address = s.address.has_value();
        pin_notes.push_back(
            s.address ? absl::StrCat(name->second, " is a kernel name, which no device keeps: the class selects the "
                                     "device that had it", where, " (", d->name, ", address ", *s.address,
                                     "), not one that takes the name later or elsewhere")
                      : absl::StrCat(name->second, " is a kernel name, which no device keeps, and ", d->name,
                                     " publishes no address to pin: the class selects any device like it"));
      }
      auto o = outsider(s);
      if (o && !s.pin_address && s.address) {
        s.pin_address = true;
        o = outsider(s);
      }
      if (o && !s.pin_serial && s.serial) {
        s.pin_serial = true;
        o = outsider(s);
      }
      if (o) {
        out.reason = absl::StrCat(
            "no attribute tells ", d->name, several ? absl::StrCat(" on ", node_name(n)) : "", " from ",
            o->second->name, several ? absl::StrCat(" on ", node_name(o->first)) : "",
            ", which the group does not name", several ? " there" : "", ": a class would select both");
        out.nodes.clear();
        planned.selectors.clear();
        return planned;
      }
      // Two devices with one selector (identical twins, both named) need it once.
      bool seen = false;
      for (const auto& have : planned.selectors) seen = seen || have.Cel() == s.Cel();
      if (!seen) planned.selectors.push_back(std::move(s));
    }
  }
  out.notes.clear();
  for (const auto& note : GroupNotes(group)) out.notes.push_back(note);
  for (const auto& note : pin_notes) {
    if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) out.notes.push_back(note);
  }
  for (size_t n = 0; n < indexes.size(); ++n) {
    NodeOutcome no;
    no.node = indexes[n].node->node;
    no.moves = results[n].moves;
    no.reason = results[n].reason;
    for (const auto* d : results[n].moved) {
      if (!no.moves) break;
      no.devices.push_back(d->name);
      out.devices.push_back(several ? absl::StrCat(no.node, "/", d->name) : d->name);
    }
    out.moves = out.moves || no.moves;
    if (no.moves) {
      for (const auto& note : results[n].notes) {
        std::string line = several ? absl::StrCat(no.node, ": ", note) : note;
        if (std::find(out.notes.begin(), out.notes.end(), line) == out.notes.end()) out.notes.push_back(line);
      }
    }
    out.nodes.push_back(std::move(no));
  }
  if (!out.moves) {
    planned.selectors.clear();
    out.notes = group.notes;
  }
  return planned;
}

bool IsResourceName(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<MigrationPlan> PlanMigration(const PluginConfig& config, const std::vector<NodeDevices>& nodes,
                                            const MigrationOptions& options) {
  if (nodes.empty()) return absl::InvalidArgumentError("no nodes to plan for");
  MigrationPlan plan;
  if (!options.domain.empty()) {
    plan.domain = options.domain;
    plan.domain_origin = "--domain";
  } else if (!config.domain.empty()) {
    plan.domain = config.domain;
    plan.domain_origin = config.domain_origin;
  } else {
    plan.domain = kDefaultDomain;
    plan.domain_origin = "the plugin's default";
  }
  if (!apis::IsDnsSubdomain(plan.domain)) {
    return absl::InvalidArgumentError(absl::StrCat("domain '", plan.domain, "' (", plan.domain_origin,
                                                   ") is not a DNS subdomain"));
  }
  plan.input_notes = config.notes;
  std::vector<NodeIndex> indexes;
  std::set<std::string> node_names;
  for (const auto& n : nodes) {
    if (nodes.size() > 1 && (n.node.empty() || !node_names.insert(n.node).second)) {
      return absl::InvalidArgumentError(absl::StrCat("node name '", n.node, "' is empty or given twice"));
    }
    plan.nodes.push_back(n.node);
    indexes.emplace_back(n);
  }
  const bool several = nodes.size() > 1;
  for (const auto& device : config.devices) {
    if (!IsResourceName(device.name)) {
      return absl::InvalidArgumentError(absl::StrCat("device name '", device.name, "' cannot be an extended resource name"));
    }
    const std::string class_name = absl::AsciiStrToLower(absl::StrCat(
        device.name, ".", options.class_suffix.empty() ? plan.domain : options.class_suffix));
    if (!apis::IsDnsSubdomain(class_name)) {
      return absl::InvalidArgumentError(absl::StrCat("class name '", class_name, "' is not a DNS subdomain"));
    }
    std::vector<std::string> terms;
    for (size_t g = 0; g < device.groups.size(); ++g) {
      Planned planned = PlanGroup(device, g, indexes, several);
      for (const auto& s : planned.selectors) {
        std::string term = absl::StrCat("          ", s.Cel());
        if (std::find(terms.begin(), terms.end(), term) == terms.end()) terms.push_back(std::move(term));
      }
      plan.groups.push_back(std::move(planned.outcome));
    }
    if (terms.empty()) continue;
    std::sort(terms.begin(), terms.end());
    // Written by hand: a block scalar keeps the CEL readable, one selected device per line. Every value is a DNS
    // name or a resource name, so none needs quoting.
    absl::StrAppend(&plan.device_classes_yaml, "---\n", "apiVersion: resource.k8s.io/v1\n", "kind: DeviceClass\n",
                    "metadata:\n", "  name: ", class_name, "\n", "spec:\n", "  extendedResourceName: ", plan.domain,
                    "/", device.name, "\n", "  selectors:\n", "  - cel:\n", "      expression: |-\n",
                    "        device.driver == \"", discovery::kDriverName, "\" && (\n", absl::StrJoin(terms, " ||\n"),
                    "\n        )\n");
  }
  return plan;
}

std::string FormatMigrationPlan(const MigrationPlan& plan) {
  const bool several = plan.nodes.size() > 1;
  std::string out = absl::StrCat("# squat/generic-device-plugin groups on liken.sh devices of ",
                                 several ? absl::StrCat("nodes ", absl::StrJoin(plan.nodes, ", ")) : "this node", "\n");
  for (const auto& n : plan.input_notes) absl::StrAppend(&out, "# ", n, "\n");
  absl::StrAppend(&out, "# resource names: ", plan.domain, "/<name> (domain: ", plan.domain_origin, ")\n");
  for (const auto& g : plan.groups) {
    absl::StrAppend(&out, "# ", g.resource, "[", g.index, "] ", g.what, ": ");
    if (!g.reason.empty()) {
      absl::StrAppend(&out, "cannot move: ", g.reason, "\n");
    } else if (!several) {
      const NodeOutcome& n = g.nodes.front();
      if (n.moves) {
        absl::StrAppend(&out, "moves to ", absl::StrJoin(n.devices, ", "), "\n");
      } else {
        absl::StrAppend(&out, "cannot move: ", n.reason, "\n");
      }
    } else {
      std::vector<std::string> serves, not_served;
      for (const auto& n : g.nodes) (n.moves ? serves : not_served).push_back(n.node);
      absl::StrAppend(&out, serves.empty() ? "cannot move on any node"
                                           : absl::StrCat("serves ", absl::StrJoin(serves, ", ")),
                      not_served.empty() || serves.empty() ? "" : absl::StrCat("; not ", absl::StrJoin(not_served, ", ")),
                      "\n");
      for (const auto& n : g.nodes) {
        absl::StrAppend(&out, "#   ", n.node, ": ",
                        n.moves ? absl::StrCat("moves to ", absl::StrJoin(n.devices, ", ")) : n.reason, "\n");
      }
    }
    for (const auto& n : g.notes) absl::StrAppend(&out, "#   ", n, "\n");
  }
  if (plan.device_classes_yaml.empty()) absl::StrAppend(&out, "# no group moves: no DeviceClass\n");
  absl::StrAppend(&out, plan.device_classes_yaml);
  return out;
}

}  // namespace liken::migrate
