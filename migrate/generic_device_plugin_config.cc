// Reading squat/generic-device-plugin's configuration the way the plugin reads it. The plugin has two readers:
// a `--device` value goes YAML -> JSON -> Go's encoding/json (a YAML 1.1 reading: an unquoted 0403 is the octal
// number 259, which the USB ID decoder then prints in decimal and reads as hex), and its config file goes
// through viper and mapstructure (a YAML 1.2 reading, where an unquoted number is the ID's value itself). Both
// match keys in any case and ignore keys they do not know.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "migrate/generic_device_plugin.h"

namespace liken::migrate {
namespace {

// Which of the plugin's readers a specification goes through.
enum class Reader {
  kFlag,        // a --device value (and MicroShift's devices, which its API decodes from JSON)
  kConfigFile,  // the plugin's config file
  kMicroShift,  // MicroShift's genericDevicePlugin.devices: `usbs`, IDs as hex with an optional 0x
};

struct Context {
  PluginConfig* out;
  std::set<std::string> names;
};

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

bool Plain(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

// The value of `key` in map `node`, matched in any case as Go's decoders do; an undefined node when absent.
YAML::Node Field(const YAML::Node& node, absl::string_view key) {
  if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& kv : node) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  for (const auto& kv : node) {
    if (kv.first.IsScalar() && Lower(kv.first.Scalar()) == Lower(key)) return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// Keys of `node` that are not in `known` (compared in any case).
std::vector<std::string> UnknownKeys(const YAML::Node& node, std::initializer_list<absl::string_view> known) {
  std::vector<std::string> out;
  if (!node.IsMap()) return out;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;
    const std::string k = Lower(kv.first.Scalar());
    bool found = false;
    for (auto want : known) found = found || k == Lower(want);
    if (!found) out.push_back(kv.first.Scalar());
  }
  return out;
}

// An unquoted scalar as a YAML integer (base prefixes 0x, 0o, 0b, and a leading 0 for octal, as Go's YAML
// readers resolve them), or nullopt when it is not one. Digits that are not a valid octal read as decimal, as
// the readers' float fallback does.
std::optional<int64_t> YamlInteger(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s = s.substr(1);
  }
  if (s.empty() || s.size() > 20) return std::nullopt;
  int base = 10;
  std::string digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16, digits = s.substr(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
    base = 8, digits = s.substr(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2, digits = s.substr(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = s.find_first_not_of("01234567") == std::string::npos ? 8 : 10;
  }
  const char* allowed = base == 16 ? "0123456789abcdefABCDEF" : base == 8 ? "01234567" : base == 2 ? "01" : "0123456789";
  if (digits.empty() || digits.find_first_not_of(allowed) != std::string::npos) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    const int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    v = v * base + d;
    if (v > (uint64_t{1} << 40)) return std::nullopt;  // far beyond any value read here
  }
  return negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

// Go's strconv.ParseUint(s, 16, 16): hex digits only, no prefix, at most 0xffff.
std::optional<uint32_t> Hex16(absl::string_view s) {
  if (s.empty() || s.find_first_not_of("0123456789abcdefABCDEF") != absl::string_view::npos) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    if (v > 0xffff) return std::nullopt;
  }
  return v;
}

std::string Hex4(uint32_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(4, '0');
  for (int i = 3; i >= 0; --i, v >>= 4) out[i] = kDigits[v & 0xf];
  return out;
}

// A USB ID as `reader` reads it. `note` gets a line when the plugin's reading differs from the text read as hex.
absl::StatusOr<std::string> UsbId(const YAML::Node& n, const std::string& where, Reader reader, std::string* note) {
  if (!Present(n)) return std::string("0000");  // null or absent: the plugin's zero value
  if (!n.IsScalar()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a USB ID"));
  const std::string text = n.Scalar();
  std::optional<uint32_t> value;
  if (reader == Reader::kMicroShift) {
    absl::string_view digits = text;
    if (!absl::ConsumePrefix(&digits, "0x")) absl::ConsumePrefix(&digits, "0X");
    value = Hex16(digits);
  } else if (Plain(n) && YamlInteger(text)) {
    const int64_t number = *YamlInteger(text);
    if (number < 0) return absl::InvalidArgumentError(absl::StrCat(where, " ", text, " is negative"));
    if (reader == Reader::kConfigFile) {
      if (number <= 0xffff) value = static_cast<uint32_t>(number);  // the number is the ID
    } else {
      value = Hex16(std::to_string(number));  // the number printed in decimal, read as hex
    }
    if (value && Hex16(text) != value) {
      *note = absl::StrCat(where, " ", text, " is an unquoted YAML number: the plugin reads it as ", Hex4(*value),
                           "; quote it to mean ", text);
    }
  } else if (reader == Reader::kFlag && text.empty()) {
    value = 0;  // "" decodes to the zero value
  } else {
    value = Hex16(text);
  }
  if (!value) {
    return absl::InvalidArgumentError(absl::StrCat(where, " '", text, "' is not a USB ID the plugin reads (",
                                                   reader == Reader::kMicroShift ? "hex, 0x optional" : "hex digits, no 0x",
                                                   ", at most ffff)"));
  }
  return Hex4(*value);
}

absl::StatusOr<std::string> StringField(const YAML::Node& map, absl::string_view key, const std::string& where) {
  const YAML::Node v = Field(map, key);
  if (!Present(v)) return std::string();
  if (!v.IsScalar()) return absl::InvalidArgumentError(absl::StrCat(where, ".", key, " is not a string"));
  return v.Scalar();
}

absl::StatusOr<bool> BoolField(const YAML::Node& map, absl::string_view key, const std::string& where, Reader reader) {
  const YAML::Node v = Field(map, key);
  if (!Present(v)) return false;
  if (Plain(v)) {
    const std::string s = v.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (reader != Reader::kConfigFile) {  // YAML 1.1 booleans
      for (const char* t : {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"}) if (s == t) return true;
      for (const char* f : {"n", "N", "no", "No", "NO", "off", "Off", "OFF"}) if (s == f) return false;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(where, ".", key, " '", v.IsScalar() ? v.Scalar() : "...",
                                                 "' is not true or false"));
}

// A non-negative integer field (count, limit): 0 or absent gives `fallback`, as the plugin's defaults do.
absl::StatusOr<uint32_t> CountField(const YAML::Node& map, absl::string_view key, const std::string& where, uint32_t fallback) {
  const YAML::Node v = Field(map, key);
  if (!Present(v)) return fallback;
  std::optional<int64_t> n;
  if (Plain(v)) n = YamlInteger(v.Scalar());
  if (!n || *n < 0 || *n > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".", key, " '", v.IsScalar() ? v.Scalar() : "...",
                                                   "' is not a count (an unquoted whole number)"));
  }
  return *n == 0 ? fallback : static_cast<uint32_t>(*n);
}

absl::Status ParsePath(const YAML::Node& node, const std::string& where, Reader reader, PluginGroup* group,
                       std::vector<std::string>* notes) {
  if (!node.IsMap()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a map"));
  PluginPath path;
  auto s = StringField(node, "path", where);
  if (!s.ok()) return s.status();
  path.path = std::string(absl::StripAsciiWhitespace(*s));
  auto m = StringField(node, "mountPath", where);
  if (!m.ok()) return m.status();
  path.mount_path = std::string(absl::StripAsciiWhitespace(*m));
  auto t = StringField(node, "type", where);
  if (!t.ok()) return t.status();
  if (!t->empty()) path.type = *t;
  auto p = StringField(node, "permissions", where);
  if (!p.ok()) return p.status();
  if (!p->empty() || path.type != "Device") path.permissions = *p;
  auto ro = BoolField(node, "readOnly", where, reader);
  if (!ro.ok()) return ro.status();
  path.read_only = *ro;
  auto limit = CountField(node, "limit", where, 1);
  if (!limit.ok()) return limit.status();
  path.limit = *limit;
  auto o = BoolField(node, "optional", where, reader);
  if (!o.ok()) return o.status();
  path.optional = *o;
  for (const auto& k : UnknownKeys(node, {"path", "mountPath", "type", "permissions", "readOnly", "limit", "optional"})) {
    notes->push_back(absl::StrCat(where, ": key '", k, "' is not one the plugin reads; it is ignored"));
  }
  if (path.path.empty() || path.path[0] != '/') {
    if (group->refusal.empty()) {
      group->refusal = absl::StrCat("path '", path.path, "' is not absolute: the plugin finds nothing there");
    }
  }
  group->paths.push_back(std::move(path));
  return absl::OkStatus();
}

absl::StatusOr<PluginDevice> ParseDevice(const YAML::Node& node, const std::string& where, Reader reader,
                                         std::vector<std::string>* notes) {
  if (node.IsScalar() && reader == Reader::kFlag) {  // a --device value given as a string: one specification
    YAML::Node inner;
    try {
      inner = YAML::Load(node.Scalar());
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": not JSON or YAML: ", e.what()));
    }
    if (!inner.IsMap()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a device specification"));
    return ParseDevice(inner, where, reader, notes);
  }
  if (node.IsScalar()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, " is a string, and the plugin's config file takes each device as a map (a string is a --device value)"));
  }
  if (!node.IsMap()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a device specification"));
  PluginDevice device;
  auto name = StringField(node, "name", where);
  if (!name.ok()) return name.status();
  device.name = std::string(absl::StripAsciiWhitespace(*name));
  // The plugin's own rule for a device's name.
  const bool name_ok = device.name.size() >= 2 &&
                       device.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos &&
                       device.name.front() != '-' && device.name.back() != '-';
  if (!name_ok) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": name '", device.name,
                                                   "' is not one the plugin takes: lowercase letters, digits and "
                                                   "'-', starting and ending with a letter or digit"));
  }
  const std::string at = absl::StrCat("device '", device.name, "'");
  for (const auto& k : UnknownKeys(node, {"name", "groups"})) {
    notes->push_back(absl::StrCat(at, ": key '", k, "' is not one the plugin reads; it is ignored"));
  }
  const YAML::Node groups = Field(node, "groups");
  if (Present(groups) && !groups.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(at, ".groups is not a list"));
  if (!Present(groups) || groups.size() == 0) {
    notes->push_back(absl::StrCat(at, " has no groups: the plugin serves nothing under it"));
    return device;
  }
  const char* usb_key = reader == Reader::kMicroShift ? "usbs" : "usb";
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string gw = absl::StrCat(at, ".groups[", g, "]");
    const YAML::Node group = groups[g];
    if (!group.IsMap()) return absl::InvalidArgumentError(absl::StrCat(gw, " is not a map"));
    PluginGroup out;
    auto count = CountField(group, "count", gw, 1);
    if (!count.ok()) return count.status();
    out.count = *count;
    for (const auto& k : UnknownKeys(group, {"paths", usb_key, "count"})) {
      notes->push_back(absl::StrCat(gw, ": key '", k, "' is not one the plugin reads; it is ignored"));
    }
    const YAML::Node paths = Field(group, "paths");
    const YAML::Node usb = Field(group, usb_key);
    if (Present(paths) && !paths.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(gw, ".paths is not a list"));
    if (Present(usb) && !usb.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(gw, ".", usb_key, " is not a list"));
    if (Present(paths) && Present(usb) && paths.size() > 0 && usb.size() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(gw, " defines both paths and ", usb_key,
                                                     ", which the plugin refuses"));
    }
    if (Present(paths)) {
      for (size_t p = 0; p < paths.size(); ++p) {
        if (auto s = ParsePath(paths[p], absl::StrCat(gw, ".paths[", p, "]"), reader, &out, notes); !s.ok()) return s;
      }
    }
    if (Present(usb)) {
      for (size_t u = 0; u < usb.size(); ++u) {
        const std::string uw = absl::StrCat(gw, ".", usb_key, "[", u, "]");
        if (!usb[u].IsMap()) return absl::InvalidArgumentError(absl::StrCat(uw, " is not a map"));
        PluginUsb spec;
        std::string note;
        auto v = UsbId(Field(usb[u], "vendor"), uw + ".vendor", reader, &note);
        if (!v.ok()) return v.status();
        if (!note.empty()) out.notes.push_back(std::move(note));
        note.clear();
        auto p = UsbId(Field(usb[u], "product"), uw + ".product", reader, &note);
        if (!p.ok()) return p.status();
        if (!note.empty()) out.notes.push_back(std::move(note));
        const YAML::Node serial = Field(usb[u], "serial");
        if (Present(serial)) {
          if (!serial.IsScalar()) return absl::InvalidArgumentError(absl::StrCat(uw, ".serial is not a string"));
          if (Plain(serial) && YamlInteger(serial.Scalar()) && out.refusal.empty()) {
            out.refusal = absl::StrCat(uw, ".serial ", serial.Scalar(),
                                       " is an unquoted YAML number, which the plugin does not compare as the text "
                                       "written; quote it");
          }
          spec.serial = serial.Scalar();
        }
        for (const auto& k : UnknownKeys(usb[u], {"vendor", "product", "serial"})) {
          notes->push_back(absl::StrCat(uw, ": key '", k, "' is not one the plugin reads; it is ignored"));
        }
        spec.vendor = *v;
        spec.product = *p;
        out.usb.push_back(std::move(spec));
      }
    }
    if (out.paths.empty() && out.usb.empty() && out.refusal.empty()) {
      out.refusal = absl::StrCat("it names no paths and no ", usb_key, ": the plugin serves nothing for it");
    }
    device.groups.push_back(std::move(out));
  }
  return device;
}

absl::Status AddDevice(Context* ctx, PluginDevice device, const std::string& origin) {
  if (!ctx->names.insert(device.name).second) {
    return absl::InvalidArgumentError(absl::StrCat("device '", device.name, "' is specified twice (again in ", origin,
                                                   "); the plugin would register its resource twice"));
  }
  ctx->out->devices.push_back(std::move(device));
  return absl::OkStatus();
}

absl::Status SetDomain(Context* ctx, const std::string& domain, const std::string& origin) {
  if (domain.empty()) return absl::OkStatus();
  if (!ctx->out->domain.empty() && ctx->out->domain != domain) {
    return absl::InvalidArgumentError(absl::StrCat("two domains: '", ctx->out->domain, "' (", ctx->out->domain_origin,
                                                   ") and '", domain, "' (", origin, ")"));
  }
  ctx->out->domain = domain;
  ctx->out->domain_origin = origin;
  return absl::OkStatus();
}

// A list of --device values, or of config-file entries.
absl::Status ReadDeviceList(Context* ctx, const YAML::Node& list, const std::string& origin, Reader reader,
                            const char* what) {
  size_t before = ctx->out->devices.size();
  for (size_t i = 0; i < list.size(); ++i) {
    auto d = ParseDevice(list[i], absl::StrCat(origin, " [", i, "]"), reader, &ctx->out->notes);
    if (!d.ok()) return d.status();
    if (auto s = AddDevice(ctx, *std::move(d), origin); !s.ok()) return s;
  }
  ctx->out->notes.push_back(absl::StrCat("read ", origin, ": ", ctx->out->devices.size() - before, " ", what));
  return absl::OkStatus();
}

// The plugin's config file: `devices` (or `device`) and `domain`.
absl::Status ReadConfigFile(Context* ctx, const YAML::Node& map, const std::string& origin) {
  YAML::Node list = Field(map, "devices");
  if (!Present(list)) list = Field(map, "device");
  if (!list.IsSequence()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": devices is not a list, which the plugin refuses"));
  }
  auto domain = StringField(map, "domain", origin);
  if (!domain.ok()) return domain.status();
  if (auto s = SetDomain(ctx, *domain, absl::StrCat("domain in ", origin)); !s.ok()) return s;
  return ReadDeviceList(ctx, list, origin, Reader::kConfigFile, "device specification(s)");
}

// The command line of one container: its --device values, --domain and --config.
absl::Status ReadContainer(Context* ctx, const YAML::Node& container, const std::string& owner, bool* read) {
  auto name = StringField(container, "name", owner);
  const std::string origin = absl::StrCat(owner, ", container ", name.ok() ? *name : "?");
  std::vector<std::string> tokens;
  for (const char* key : {"command", "args"}) {
    const YAML::Node list = Field(container, key);
    if (!list.IsSequence()) continue;
    for (const auto& t : list) tokens.push_back(t.IsScalar() ? t.Scalar() : "");
  }
  std::vector<std::string> devices;
  std::string domain, config;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    auto value = [&](absl::string_view flag, std::string* out) {
      if (t == flag && i + 1 < tokens.size()) {
        *out = tokens[++i];
        return true;
      }
      if (t.rfind(absl::StrCat(flag, "="), 0) == 0) {
        *out = t.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    std::string v;
    if (value("--device", &v)) devices.push_back(v);
    else if (value("--domain", &v)) domain = v;
    else if (value("--config", &v)) config = v;
  }
  if (devices.empty() && config.empty()) return absl::OkStatus();
  if (domain.empty()) {  // the plugin reads its flags from the environment too
    const YAML::Node env = Field(container, "env");
    if (env.IsSequence()) {
      for (const auto& e : env) {
        auto n = StringField(e, "name", origin);
        auto val = StringField(e, "value", origin);
        if (n.ok() && val.ok() && *n == "DOMAIN") domain = *val;
      }
    }
  }
  *read = true;
  if (auto s = SetDomain(ctx, domain, absl::StrCat("--domain of ", origin)); !s.ok()) return s;
  if (!devices.empty()) {
    if (!config.empty()) {
      ctx->out->notes.push_back(absl::StrCat(origin, " also reads --config ", config,
                                             ", whose devices its --device flags replace"));
    }
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& d : devices) list.push_back(YAML::Node(d));
    return ReadDeviceList(ctx, list, origin, Reader::kFlag, "--device value(s)");
  }
  ctx->out->notes.push_back(absl::StrCat(origin, " reads its devices from --config ", config,
                                         ": give that file too (or the ConfigMap that holds it)"));
  return absl::OkStatus();
}

absl::Status ReadDocument(Context* ctx, const YAML::Node& doc, const std::string& where);

absl::Status ReadObject(Context* ctx, const YAML::Node& doc, const std::string& where) {
  const std::string kind = Field(doc, "kind").IsScalar() ? Field(doc, "kind").Scalar() : "";
  const YAML::Node meta = Field(doc, "metadata");
  std::string name = Field(meta, "name").IsScalar() ? Field(meta, "name").Scalar() : "?";
  if (Field(meta, "namespace").IsScalar()) name = absl::StrCat(Field(meta, "namespace").Scalar(), "/", name);
  const std::string owner = absl::StrCat(kind, " ", name);
  if (kind == "List" || absl::EndsWith(kind, "List")) {
    const YAML::Node items = Field(doc, "items");
    if (!items.IsSequence()) return absl::OkStatus();
    for (size_t i = 0; i < items.size(); ++i) {
      if (auto s = ReadDocument(ctx, items[i], absl::StrCat(where, " item ", i + 1)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (kind == "ConfigMap") {
    const YAML::Node data = Field(doc, "data");
    if (!data.IsMap()) {
      ctx->out->notes.push_back(absl::StrCat("skipped ", owner, ": no data"));
      return absl::OkStatus();
    }
    for (const auto& kv : data) {
      const std::string key = kv.first.Scalar();
      YAML::Node value;
      try {
        value = YAML::Load(kv.second.IsScalar() ? kv.second.Scalar() : "");
      } catch (const YAML::Exception&) {
        value = YAML::Node();
      }
      if (value.IsMap() && (Present(Field(value, "devices")) || Present(Field(value, "device")))) {
        if (auto s = ReadConfigFile(ctx, value, absl::StrCat(owner, " key ", key)); !s.ok()) return s;
      } else {
        ctx->out->notes.push_back(absl::StrCat("skipped ", owner, " key ", key, ": not a plugin config file"));
      }
    }
    return absl::OkStatus();
  }
  YAML::Node pod;
  if (kind == "Pod") {
    pod = Field(doc, "spec");
  } else if (kind == "CronJob") {
    pod = Field(Field(Field(Field(Field(doc, "spec"), "jobTemplate"), "spec"), "template"), "spec");
  } else if (kind == "DaemonSet" || kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet" ||
             kind == "Job") {
    pod = Field(Field(Field(doc, "spec"), "template"), "spec");
  }
  if (!pod.IsMap()) {
    ctx->out->notes.push_back(absl::StrCat("skipped ", owner, ": not a device plugin configuration"));
    return absl::OkStatus();
  }
  bool read = false;
  for (const char* key : {"initContainers", "containers"}) {
    const YAML::Node containers = Field(pod, key);
    if (!containers.IsSequence()) continue;
    for (const auto& c : containers) {
      if (auto s = ReadContainer(ctx, c, owner, &read); !s.ok()) return s;
    }
  }
  if (!read) ctx->out->notes.push_back(absl::StrCat("skipped ", owner, ": no container has --device or --config"));
  return absl::OkStatus();
}

absl::Status ReadDocument(Context* ctx, const YAML::Node& doc, const std::string& where) {
  if (!doc.IsDefined() || doc.IsNull()) return absl::OkStatus();
  if (doc.IsSequence()) {
    return ReadDeviceList(ctx, doc, absl::StrCat(where, " (a list)"), Reader::kFlag, "--device value(s)");
  }
  if (!doc.IsMap()) {
    ctx->out->notes.push_back(absl::StrCat("skipped ", where, ": not a device plugin configuration"));
    return absl::OkStatus();
  }
  if (Field(doc, "kind").IsScalar() && Field(doc, "apiVersion").IsScalar()) return ReadObject(ctx, doc, where);
  if (const YAML::Node gdp = Field(doc, "genericDevicePlugin"); Present(gdp)) {
    const std::string origin = absl::StrCat(where, " (MicroShift's genericDevicePlugin)");
    if (!gdp.IsMap()) return absl::InvalidArgumentError(absl::StrCat(origin, " is not a map"));
    auto status = StringField(gdp, "status", origin);
    if (status.ok() && *status != "Enabled") {
      ctx->out->notes.push_back(absl::StrCat(origin, ": status is ", status->empty() ? "unset" : *status,
                                             ", so MicroShift does not run the plugin (Enabled runs it)"));
    }
    auto domain = StringField(gdp, "domain", origin);
    if (!domain.ok()) return domain.status();
    if (auto s = SetDomain(ctx, domain->empty() ? "device.microshift.io" : *domain,
                           absl::StrCat(domain->empty() ? "MicroShift's default, " : "domain in ", origin));
        !s.ok()) {
      return s;
    }
    const YAML::Node list = Field(gdp, "devices");
    if (!Present(list)) {
      ctx->out->notes.push_back(absl::StrCat(origin, ": no devices"));
      return absl::OkStatus();
    }
    if (!list.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(origin, ".devices is not a list"));
    return ReadDeviceList(ctx, list, origin, Reader::kMicroShift, "device specification(s)");
  }
  if (Present(Field(doc, "name"))) {
    auto d = ParseDevice(doc, where, Reader::kFlag, &ctx->out->notes);
    if (!d.ok()) return d.status();
    if (auto s = AddDevice(ctx, *std::move(d), where); !s.ok()) return s;
    ctx->out->notes.push_back(absl::StrCat("read ", where, ": a --device value"));
    return absl::OkStatus();
  }
  if (Present(Field(doc, "devices")) || Present(Field(doc, "device"))) {
    return ReadConfigFile(ctx, doc, absl::StrCat(where, " (a config file)"));
  }
  if (Present(Field(doc, "domain"))) {  // a config file that sets only the domain
    auto domain = StringField(doc, "domain", where);
    if (!domain.ok()) return domain.status();
    return SetDomain(ctx, *domain, absl::StrCat("domain in ", where));
  }
  ctx->out->notes.push_back(absl::StrCat("skipped ", where,
                                         ": not a device plugin configuration (no name, devices, "
                                         "genericDevicePlugin or kind)"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PluginConfig> ParseGenericDevicePluginConfig(std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not JSON or YAML: ", e.what()));
  }
  PluginConfig config;
  Context ctx{&config, {}};
  size_t non_empty = 0;
  for (const auto& d : docs) non_empty += (d.IsDefined() && !d.IsNull()) ? 1 : 0;
  size_t n = 0;
  for (const auto& d : docs) {
    if (!d.IsDefined() || d.IsNull()) continue;
    ++n;
    const std::string where = non_empty > 1 ? absl::StrCat("document ", n) : std::string("the input");
    try {
      if (auto s = ReadDocument(&ctx, d, where); !s.ok()) return s;
    } catch (const YAML::Exception& e) {  // a node of an unexpected shape
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", e.what()));
    }
  }
  if (config.devices.empty()) {
    std::string why = config.notes.empty() ? "" : absl::StrCat(" (", absl::StrJoin(config.notes, "; "), ")");
    return absl::InvalidArgumentError(absl::StrCat("no device specification in the input", why));
  }
  return config;
}

}  // namespace liken::migrate
