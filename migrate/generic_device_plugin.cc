#include "migrate/generic_device_plugin.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apis/resource_slice.h"

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

// The scalar at `key` of map `node`, or "" when absent.
absl::StatusOr<std::string> ScalarAt(const YAML::Node& node, const char* key, const std::string& where) {
  const YAML::Node v = node[key];
  if (!v.IsDefined() || v.IsNull()) return std::string();
  if (!v.IsScalar()) return absl::InvalidArgumentError(absl::StrCat(where, ".", key, " is not a scalar"));
  return v.Scalar();
}

absl::StatusOr<bool> BoolAt(const YAML::Node& node, const char* key, const std::string& where) {
  auto s = ScalarAt(node, key, where);
  if (!s.ok()) return s.status();
  if (s->empty() || *s == "false") return false;
  if (*s == "true") return true;
  return absl::InvalidArgumentError(absl::StrCat(where, ".", key, " is not true or false"));
}

absl::StatusOr<std::string> UsbId(const YAML::Node& node, const char* key, const std::string& where) {
  auto s = ScalarAt(node, key, where);
  if (!s.ok()) return s.status();
  std::string id = absl::AsciiStrToLower(*s);
  if (id.rfind("0x", 0) == 0) id = id.substr(2);
  if (id.empty() || id.size() > 4 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".", key, " '", *s, "' is not a USB ID (hex, up to 4 digits)"));
  }
  return std::string(4 - id.size(), '0') + id;
}

absl::StatusOr<PluginDevice> ParseDevice(const YAML::Node& node, const std::string& where) {
  if (node.IsScalar()) {  // a --device value given as a string: one specification
    YAML::Node inner;
    try {
      inner = YAML::Load(node.Scalar());
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", e.what()));
    }
    return ParseDevice(inner, where);
  }
  if (!node.IsMap()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a device specification"));
  PluginDevice device;
  auto name = ScalarAt(node, "name", where);
  if (!name.ok()) return name.status();
  if (name->empty()) return absl::InvalidArgumentError(absl::StrCat(where, " has no name"));
  device.name = *name;
  const std::string at = absl::StrCat("device '", device.name, "'");
  const YAML::Node groups = node["groups"];
  if (!groups.IsDefined() || !groups.IsSequence() || groups.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(at, " has no groups"));
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string gw = absl::StrCat(at, ".groups[", g, "]");
    const YAML::Node group = groups[g];
    if (!group.IsMap()) return absl::InvalidArgumentError(absl::StrCat(gw, " is not a map"));
    PluginGroup out;
    auto count = ScalarAt(group, "count", gw);
    if (!count.ok()) return count.status();
    if (!count->empty()) {
      if (count->find_first_not_of("0123456789") != std::string::npos || count->size() > 9) {
        return absl::InvalidArgumentError(absl::StrCat(gw, ".count '", *count, "' is not a count"));
      }
      out.count = static_cast<uint32_t>(std::stoul(*count));
      if (out.count == 0) out.count = 1;  // the plugin's default
    }
    const YAML::Node paths = group["paths"];
    const YAML::Node usb = group["usb"];
    if (paths.IsDefined() && !paths.IsNull() && usb.IsDefined() && !usb.IsNull()) {
      return absl::InvalidArgumentError(absl::StrCat(gw, " defines both paths and usb"));
    }
    if (paths.IsDefined() && !paths.IsNull()) {
      if (!paths.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(gw, ".paths is not a list"));
      for (size_t p = 0; p < paths.size(); ++p) {
        const std::string pw = absl::StrCat(gw, ".paths[", p, "]");
        if (!paths[p].IsMap()) return absl::InvalidArgumentError(absl::StrCat(pw, " is not a map"));
        PluginPath path;
        auto s = ScalarAt(paths[p], "path", pw);
        if (!s.ok()) return s.status();
        if (s->empty() || (*s)[0] != '/') return absl::InvalidArgumentError(absl::StrCat(pw, ".path is not an absolute path"));
        path.path = *s;
        auto m = ScalarAt(paths[p], "mountPath", pw);
        if (!m.ok()) return m.status();
        path.mount_path = *m;
        auto o = BoolAt(paths[p], "optional", pw);
        if (!o.ok()) return o.status();
        path.optional = *o;
        out.paths.push_back(std::move(path));
      }
    }
    if (usb.IsDefined() && !usb.IsNull()) {
      if (!usb.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(gw, ".usb is not a list"));
      for (size_t u = 0; u < usb.size(); ++u) {
        const std::string uw = absl::StrCat(gw, ".usb[", u, "]");
        if (!usb[u].IsMap()) return absl::InvalidArgumentError(absl::StrCat(uw, " is not a map"));
        PluginUsb spec;
        auto v = UsbId(usb[u], "vendor", uw);
        if (!v.ok()) return v.status();
        auto p = UsbId(usb[u], "product", uw);
        if (!p.ok()) return p.status();
        auto s = ScalarAt(usb[u], "serial", uw);
        if (!s.ok()) return s.status();
        out.usb.push_back({*v, *p, *s});
      }
    }
    if (out.paths.empty() && out.usb.empty()) return absl::InvalidArgumentError(absl::StrCat(gw, " has no paths and no usb"));
    device.groups.push_back(std::move(out));
  }
  return device;
}

// filepath.Glob's match: '*' and '?' never cross '/'. A path that names a directory also matches what is under it.
bool PathMatches(const std::string& pattern, const std::string& node) {
  if (::fnmatch(pattern.c_str(), node.c_str(), FNM_PATHNAME) == 0) return true;
  std::string dir = pattern;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return node.size() > dir.size() && node.compare(0, dir.size(), dir) == 0 && node[dir.size()] == '/';
}

bool HasGlob(const std::string& pattern) { return pattern.find_first_of("*?[") != std::string::npos; }

std::optional<std::string> VirtualNodeMatching(const std::string& pattern) {
  for (const char* v : kVirtualNodes) {
    if (PathMatches(pattern, v) || PathMatches(v, pattern)) return std::string(v);
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

// What a class selects one device by: stable attributes, and the address only where needed.
struct Selector {
  std::optional<std::string> vendor, product, subsystem, address;
  bool render_node = false, display_node = false;

  static Selector Of(const PublishedDevice& d) {
    Selector s;
    s.vendor = StringAttribute(d, "vendor");
    s.product = StringAttribute(d, "product");
    s.subsystem = StringAttribute(d, "subsystem");
    s.render_node = BoolAttribute(d, "renderNode");
    s.display_node = BoolAttribute(d, "displayNode");
    return s;
  }
  bool Selects(const PublishedDevice& d) const {
    Selector o = Of(d);
    return vendor == o.vendor && product == o.product && subsystem == o.subsystem && render_node == o.render_node &&
           display_node == o.display_node && (!address || address == StringAttribute(d, "address"));
  }
  std::string Cel() const {
    auto attr = [](const char* name) { return absl::StrCat("device.attributes[\"", discovery::kDriverName, "\"].", name); };
    std::vector<std::string> terms;
    // Every read is guarded by has(): reading an attribute a device lacks is a CEL error, which fails the
    // allocation instead of skipping the device.
    auto eq = [&](const char* name, const std::optional<std::string>& v) {
      terms.push_back(v ? absl::StrCat("has(", attr(name), ") && ", attr(name), " == \"", *v, "\"")
                        : absl::StrCat("!has(", attr(name), ")"));
    };
    eq("vendor", vendor);
    eq("product", product);
    eq("subsystem", subsystem);
    if (render_node) terms.push_back(absl::StrCat("has(", attr("renderNode"), ") && ", attr("renderNode")));
    if (display_node) terms.push_back(absl::StrCat("has(", attr("displayNode"), ") && ", attr("displayNode")));
    if (address) eq("address", address);
    return absl::StrCat("(", absl::StrJoin(terms, " && "), ")");
  }
  friend bool operator<(const Selector& a, const Selector& b) { return a.Cel() < b.Cel(); }
};

std::string GroupInWords(const PluginGroup& g) {
  std::vector<std::string> parts;
  for (const auto& p : g.paths) parts.push_back(p.optional ? absl::StrCat(p.path, " (optional)") : p.path);
  for (const auto& u : g.usb) {
    parts.push_back(absl::StrCat("usb ", u.vendor, ":", u.product, u.serial.empty() ? "" : absl::StrCat(" serial ", u.serial)));
  }
  std::string s = absl::StrJoin(parts, " + ");
  if (g.count > 1) absl::StrAppend(&s, ", count ", g.count);
  return s;
}

// Fills `out` (devices, notes, or the reason it cannot move) for one group; returns the devices' selectors.
std::vector<Selector> PlanGroup(const PluginGroup& group, const std::vector<PublishedDevice>& published,
                                GroupOutcome* out) {
  std::vector<const PublishedDevice*> matched;  // published order, unique
  auto add = [&](const PublishedDevice* d) {
    if (std::find(matched.begin(), matched.end(), d) == matched.end()) matched.push_back(d);
  };
  for (const auto& p : group.paths) {
    bool any = false;
    for (const auto& d : published) {
      for (const auto& n : d.nodes) {
        if (PathMatches(p.path, n.path)) {
          add(&d);
          any = true;
          break;
        }
      }
    }
    if (!any) {
      if (auto v = VirtualNodeMatching(p.path)) {
        out->reason = absl::StrCat(p.path, " is a virtual node", *v == p.path ? "" : absl::StrCat(" (", *v, ")"),
                                   ": no hardware is behind it, and liken delivers only the nodes of PCI and USB "
                                   "devices; keep the device plugin for it");
        return {};
      }
      if (p.optional) {
        out->notes.push_back(absl::StrCat("optional ", p.path, ": no published device delivers it here"));
        continue;
      }
      out->reason = absl::StrCat("no published device delivers a node matching ", p.path);
      return {};
    }
    if (!p.mount_path.empty() && p.mount_path != p.path) {
      out->notes.push_back(absl::StrCat("mountPath ", p.mount_path, " is not honoured: the node appears at its host path"));
    }
  }
  for (const auto& u : group.usb) {
    bool any = false;
    for (const auto& d : published) {
      if (StringAttribute(d, "bus") != "usb" || StringAttribute(d, "vendor") != u.vendor ||
          StringAttribute(d, "product") != u.product) {
        continue;
      }
      if (!u.serial.empty() && StringAttribute(d, "serial") != u.serial) continue;
      add(&d);
      any = true;
    }
    if (!any) {
      out->reason = absl::StrCat("no published device has USB ID ", u.vendor, ":", u.product,
                                 u.serial.empty() ? "" : absl::StrCat(" and serial ", u.serial));
      return {};
    }
  }
  if (matched.empty()) {
    out->reason = "no published device delivers any of its paths";
    return {};
  }
  const size_t entries = group.paths.size() + group.usb.size();
  if (entries > 1 && matched.size() > 1) {
    std::vector<std::string> names;
    for (const auto* d : matched) names.push_back(d->name);
    std::sort(names.begin(), names.end());
    out->reason = absl::StrCat("its entries are delivered by ", matched.size(), " published devices (",
                               absl::StrJoin(names, ", "),
                               "), and a claim's request gets one device: the group cannot stay one unit");
    return {};
  }
  if (group.count > 1) {
    for (const auto* d : matched) {
      if (!d->allow_multiple_allocations) {
        out->reason = absl::StrCat("count ", group.count, ", but ", d->name,
                                   " is not shareable: liken allocates it to one claim at a time");
        return {};
      }
    }
    out->notes.push_back(absl::StrCat("count ", group.count, ": shareable, so any number of claims hold it"));
  }
  // What a claim delivers beyond the group's own nodes: the whole published device.
  for (const auto* d : matched) {
    std::vector<std::string> extra;
    for (const auto& n : d->nodes) {
      bool named = false;
      for (const auto& p : group.paths) named = named || PathMatches(p.path, n.path);
      if (!named) extra.push_back(n.path);
    }
    if (!extra.empty()) out->notes.push_back(absl::StrCat(d->name, " also delivers ", absl::StrJoin(extra, " ")));
  }
  const bool one_exact_path = group.usb.empty() && group.paths.size() == 1 && !HasGlob(group.paths[0].path);
  std::vector<Selector> selectors;
  for (const auto* d : matched) {
    out->devices.push_back(d->name);
    Selector s = Selector::Of(*d);
    if (one_exact_path) {
      int selected = 0;
      for (const auto& other : published) selected += s.Selects(other) ? 1 : 0;
      if (selected > 1) s.address = StringAttribute(*d, "address");
    }
    selectors.push_back(std::move(s));
  }
  out->moves = true;
  return selectors;
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

absl::StatusOr<std::vector<PluginDevice>> ParseGenericDevicePluginConfig(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not JSON or YAML: ", e.what()));
  }
  YAML::Node list = root;
  if (root.IsMap() && !root["name"].IsDefined()) {
    list = root["devices"].IsDefined() ? root["devices"] : root["device"];
    if (!list.IsDefined()) return absl::InvalidArgumentError("no device specification: no name, devices or device key");
  }
  std::vector<PluginDevice> out;
  if (list.IsMap() || list.IsScalar()) {
    auto d = ParseDevice(list, "device");
    if (!d.ok()) return d.status();
    out.push_back(*std::move(d));
  } else if (list.IsSequence()) {
    for (size_t i = 0; i < list.size(); ++i) {
      auto d = ParseDevice(list[i], absl::StrCat("devices[", i, "]"));
      if (!d.ok()) return d.status();
      out.push_back(*std::move(d));
    }
  } else {
    return absl::InvalidArgumentError("no device specification");
  }
  std::set<std::string> names;
  for (const auto& d : out) {
    if (!names.insert(d.name).second) return absl::InvalidArgumentError(absl::StrCat("device '", d.name, "' is specified twice"));
  }
  return out;
}

absl::StatusOr<MigrationPlan> PlanMigration(const std::vector<PluginDevice>& devices,
                                            const std::vector<PublishedDevice>& published,
                                            const MigrationOptions& options) {
  if (!apis::IsDnsSubdomain(options.domain)) {
    return absl::InvalidArgumentError(absl::StrCat("domain '", options.domain, "' is not a DNS subdomain"));
  }
  MigrationPlan plan;
  for (const auto& device : devices) {
    if (!IsResourceName(device.name)) {
      return absl::InvalidArgumentError(absl::StrCat("device name '", device.name, "' cannot be an extended resource name"));
    }
    const std::string class_name = absl::AsciiStrToLower(absl::StrCat(
        device.name, ".", options.class_suffix.empty() ? options.domain : options.class_suffix));
    if (!apis::IsDnsSubdomain(class_name)) {
      return absl::InvalidArgumentError(absl::StrCat("class name '", class_name, "' is not a DNS subdomain"));
    }
    std::set<Selector> selectors;
    for (size_t g = 0; g < device.groups.size(); ++g) {
      GroupOutcome outcome;
      outcome.resource = device.name;
      outcome.index = g;
      outcome.what = GroupInWords(device.groups[g]);
      for (auto& s : PlanGroup(device.groups[g], published, &outcome)) selectors.insert(std::move(s));
      plan.groups.push_back(std::move(outcome));
    }
    if (selectors.empty()) continue;
    std::vector<std::string> terms;
    for (const auto& s : selectors) terms.push_back(absl::StrCat("          ", s.Cel()));
    // Written by hand: a block scalar keeps the CEL readable, one selected device per line. Every value is a DNS
    // name or a resource name, so none needs quoting.
    absl::StrAppend(&plan.device_classes_yaml, "---\n", "apiVersion: resource.k8s.io/v1\n", "kind: DeviceClass\n",
                    "metadata:\n", "  name: ", class_name, "\n", "spec:\n", "  extendedResourceName: ", options.domain,
                    "/", device.name, "\n", "  selectors:\n", "  - cel:\n", "      expression: |-\n",
                    "        device.driver == \"", discovery::kDriverName, "\" && (\n", absl::StrJoin(terms, " ||\n"),
                    "\n        )\n");
  }
  return plan;
}

std::string FormatMigrationPlan(const MigrationPlan& plan) {
  std::string out = "# squat/generic-device-plugin groups on liken.sh devices of this node\n";
  for (const auto& g : plan.groups) {
    absl::StrAppend(&out, "# ", g.resource, "[", g.index, "] ", g.what, ": ");
    if (g.moves) {
      absl::StrAppend(&out, "moves to ", absl::StrJoin(g.devices, ", "), "\n");
    } else {
      absl::StrAppend(&out, "cannot move: ", g.reason, "\n");
    }
    for (const auto& n : g.notes) absl::StrAppend(&out, "#   ", n, "\n");
  }
  if (plan.device_classes_yaml.empty()) absl::StrAppend(&out, "# no group moves: no DeviceClass\n");
  absl::StrAppend(&out, plan.device_classes_yaml);
  return out;
}

}  // namespace liken::migrate
