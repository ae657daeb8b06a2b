// `kubectl liken why CLAIM|POD`: why a claim waits, in the scheduler's own words, beside the selectors of its
// requests as written and the free liken devices on the nodes that could run its pod, with the attributes those
// selectors read. CEL is not evaluated: Debian ships no CEL library, and the matching stays the scheduler's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "clusterview/cluster_index.h"
#include "clusterview/output_format.h"

namespace liken::clusterview {

// What `why` was asked about: a pod and the claims it uses, or a claim and its pod (the first that uses it).
struct WhyTarget {
  std::string namespace_name;
  std::string pod;                  // empty: no pod uses the claim
  std::vector<std::string> claims;  // the pod's claims that exist, or the one claim asked about
};

// Resolves `name` in `namespace_name`: "pod/NAME" or "resourceclaim/NAME" (also "pods/", "resourceclaims/"),
// else a claim of that name, else a pod. NotFound names what was looked for. Thread-safe.
absl::StatusOr<WhyTarget> ResolveWhyTarget(const ClusterIndex& index, const std::string& namespace_name,
                                           const std::string& name);

// The attribute names a CEL expression reads from device.attributes, fully qualified ("liken.sh/serial"), in
// order of appearance without duplicates. Reads the text only (`attributes["D"].N` and `attributes["D"]["N"]`);
// it evaluates nothing. Thread-safe.
std::vector<std::string> AttributesRead(const std::string& expression);

// One request of a claim: its class and the selectors it applies, as written.
struct WhyRequest {
  std::string name;           // "dev", or "dev/sub" for a firstAvailable alternative
  std::string device_class;
  std::string count;          // "1", "All"
  std::vector<std::string> class_selectors;
  std::vector<std::string> request_selectors;
  bool class_missing = false;  // the class does not exist
};

// One claim of the report.
struct WhyClaim {
  std::string name;
  std::string state;                  // as ClaimRow::state
  std::vector<std::string> allocated; // "node/device" of its liken devices when allocated
  std::vector<WhyRequest> requests;
};

// A liken device no claim holds (or a shared one), on a node that could run the pod.
struct WhyFreeDevice {
  std::string node;
  std::string device;
  bool shared = false;
  size_t holders = 0;  // claims holding a shared device
  std::string taints;
  std::vector<std::optional<std::string>> attributes;  // WhyReport::attributes_read's values, nullopt when absent
};

// The whole answer.
struct WhyReport {
  std::string namespace_name;
  std::string pod;
  std::string pod_phase;
  std::string node_name;  // spec.nodeName
  std::string scheduled_status;   // PodScheduled condition; empty when absent
  std::string scheduled_reason;
  std::string scheduled_message;
  std::vector<std::string> events;  // "Warning FailedScheduling (x3): message"
  std::vector<WhyClaim> claims;
  std::vector<std::string> attributes_read;
  std::vector<std::string> candidate_nodes;  // nodes with liken devices that could run the pod
  std::string nodes_note;                    // how the candidates were chosen, or why nodes could not be read
  std::vector<WhyFreeDevice> free_devices;
};

// The report for `target`, with the pod's events `events` (FetchPodEvents). Thread-safe.
WhyReport BuildWhyReport(const ClusterIndex& index, const WhyTarget& target, const std::vector<nlohmann::json>& events);

// The report as text, or a document of kind LikenWhy (json, yaml). Thread-safe.
std::string RenderWhy(const WhyReport& report, OutputFormat format);

}  // namespace liken::clusterview
