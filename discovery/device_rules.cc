#include "discovery/device_rules.h"

#include <algorithm>
#include <set>

namespace liken::discovery {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool IsRenderNode(const DeviceNode& n) { return n.subsystem == "drm" && StartsWith(n.path, "/dev/dri/renderD"); }
bool IsCardNode(const DeviceNode& n) { return n.subsystem == "drm" && StartsWith(n.path, "/dev/dri/card"); }

void SortNodes(std::vector<DeviceNode>* nodes) {
  std::sort(nodes->begin(), nodes->end(), [](const DeviceNode& a, const DeviceNode& b) { return a.path < b.path; });
}

DeliveryDecision DecideGpu(const WalkResult& walk) {
  auto split = [](const char* suffix, const char* subsystem) {
    DeliverySplit s;
    s.suffix = suffix;
    s.subsystem = subsystem;
    return s;
  };
  DeliverySplit render = split("", "drm");
  render.render_node = true;
  render.allow_multiple_allocations = true;  // the driver arbitrates between a render node's clients
  DeliverySplit display = split("-display", "drm");
  display.display_node = true;
  DeliverySplit i2c = split("-i2c-dev", "i2c-dev");
  DeliverySplit aux = split("-drm-dp-aux-dev", "drm_dp_aux_dev");
  DeliveryDecision decision;
  for (const auto& w : walk.nodes) {
    const DeviceNode& n = w.node;
    if (IsRenderNode(n)) {
      render.nodes.push_back(n);
    } else if (IsCardNode(n)) {
      display.nodes.push_back(n);
    } else if (n.subsystem == "i2c-dev") {
      i2c.nodes.push_back(n);
    } else if (n.subsystem == "drm_dp_aux_dev") {
      aux.nodes.push_back(n);
    } else if (n.subsystem == "graphics") {
      decision.notes.push_back(n.path + " (framebuffer) is delivered by nothing");
    } else {
      decision.notes.push_back(n.path + " (" + (n.subsystem.empty() ? "unknown" : n.subsystem) +
                               ") in a GPU subtree is delivered by nothing");
    }
  }
  for (DeliverySplit* split : {&render, &display, &i2c, &aux}) {
    if (split->nodes.empty()) continue;
    SortNodes(&split->nodes);
    decision.devices.push_back(std::move(*split));
  }
  return decision;
}

}  // namespace

DeliveryDecision DecideDelivery(const std::string& driver, const WalkResult& walk) {
  DeliveryDecision decision;
  if (walk.nodes.empty()) {
    // The one device published without nodes of its own: a Bluetooth adapter (its usbfs node only).
    if (driver == "btusb" && walk.has_bluetooth) decision.devices.push_back(DeliverySplit{});
    return decision;
  }
  bool gpu = std::any_of(walk.nodes.begin(), walk.nodes.end(), [](const WalkedNode& w) { return w.node.subsystem == "drm"; });
  if (gpu) return DecideGpu(walk);

  std::set<std::string> kinds;
  DeliverySplit whole;
  for (const auto& w : walk.nodes) {
    // A jack's input node belongs to the sound card it sits in.
    std::string kind = (w.inside_sound_card && w.node.subsystem == "input") ? "sound" : w.node.subsystem;
    kinds.insert(kind.empty() ? "?" : kind);
    whole.nodes.push_back(w.node);
  }
  SortNodes(&whole.nodes);
  if (kinds.size() == 1 && *kinds.begin() != "?") whole.subsystem = *kinds.begin();
  decision.devices.push_back(std::move(whole));
  return decision;
}

}  // namespace liken::discovery
