// Flap damping: a device whose presence changes too often (a worn cable, an under-powered hub) stops reaching the
// API until it has been stable for a while, as route-flap damping (RFC 2439) treats a flapping route.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"

namespace liken::controller {

// The damping's figures. Each change of a device's presence (found by the scan, or not) adds `change_penalty` to
// its penalty, which halves every `half_life`. Damping starts when the penalty exceeds `suppress_above` and ends
// when it has decayed below `reuse_below`; the penalty is capped so that a device stable for `max_damped` is
// always released. With the defaults one plug, one unplug, or an unplug and a plug (a reseated cable) are never
// damped; a third change within about 10 s is.
struct FlapDampingOptions {
  bool enabled = true;
  double change_penalty = 1000;
  double suppress_above = 2500;
  double reuse_below = 750;
  absl::Duration half_life = absl::Seconds(10);
  absl::Duration max_damped = absl::Seconds(60);
  absl::Duration report_window = absl::Minutes(1);  // "flapping: N changes in the last M s"
};

// A device damped now.
struct DampedDevice {
  std::string name;
  int changes = 0;              // changes of its presence within the report window
  absl::Duration window;        // the report window
  absl::Time since;             // when damping started
  std::string Reason() const;   // "flapping: 12 changes in the last 60 s"
};

// Decides, at each node pass, which devices are damped. One pass at a time (the node's worker thread): not
// thread-safe. Memory: one entry per device that changed within the last few half-lives, each with at most
// kMaxChangesKept change times.
class FlapDamper {
 public:
  static constexpr size_t kMaxChangesKept = 1024;

  // `clock` must outlive the damper.
  FlapDamper(Clock* clock, FlapDampingOptions options);

  // Takes the names the scan found now (`present`), counts each change since the last call (the first call sets
  // the baseline and counts none), and returns the devices damped now, sorted by name. Logs once when a device's
  // damping starts and once when it ends. A device is damped whether it is present or not: the caller leaves it
  // out of what it publishes until it is released. Not thread-safe.
  std::vector<DampedDevice> Observe(const std::set<std::string>& present);

  // How long, with no further change, until the first damped device is released (a pass then publishes it: the
  // caller asks for one); InfiniteDuration when none is damped. Not thread-safe.
  absl::Duration UntilRelease() const;

  // How many times damping started since construction. Not thread-safe.
  size_t starts() const { return starts_; }

 private:
  struct Track {
    double penalty = 0;
    absl::Time updated;
    bool damped = false;
    absl::Time damped_since;
    std::deque<absl::Time> changes;  // newest last; at most kMaxChangesKept
  };
  double Decayed(const Track& track, absl::Time now) const;

  Clock* const clock_;
  const FlapDampingOptions options_;
  const double max_penalty_;
  bool baseline_ = false;
  std::set<std::string> present_;         // as of the last call
  std::map<std::string, Track> tracks_;   // devices with a penalty left
  size_t starts_ = 0;
};

}  // namespace liken::controller
