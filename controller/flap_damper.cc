#include "controller/flap_damper.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::controller {

std::string DampedDevice::Reason() const {
  return absl::StrCat("flapping: ", changes, " changes in the last ", absl::ToInt64Seconds(window), " s");
}

FlapDamper::FlapDamper(Clock* clock, FlapDampingOptions options)
    : clock_(clock),
      options_(options),
      max_penalty_(options.reuse_below * std::exp2(absl::FDivDuration(options.max_damped, options.half_life))) {}

double FlapDamper::Decayed(const Track& track, absl::Time now) const {
  const double half_lives = absl::FDivDuration(now - track.updated, options_.half_life);
  return half_lives <= 0 ? track.penalty : track.penalty * std::exp2(-half_lives);
}

absl::Duration FlapDamper::UntilRelease() const {
  const absl::Time now = clock_->Now();
  absl::Duration soonest = absl::InfiniteDuration();
  for (const auto& [name, track] : tracks_) {
    if (!track.damped) continue;
    const double penalty = Decayed(track, now);
    // penalty * 2^(-t / half_life) < reuse_below; a little past it, so the pass that follows finds it released.
    const double half_lives = penalty > options_.reuse_below ? std::log2(penalty / options_.reuse_below) : 0;
    soonest = std::min(soonest, options_.half_life * half_lives + absl::Milliseconds(100));
  }
  return soonest;
}

std::vector<DampedDevice> FlapDamper::Observe(const std::set<std::string>& present) {
  const absl::Time now = clock_->Now();
  if (!options_.enabled) return {};
  if (baseline_) {
    // The changes: names found now and not before, and before and not now (both sets are sorted).
    std::vector<std::string> changed;
    std::set_symmetric_difference(present.begin(), present.end(), present_.begin(), present_.end(),
                                  std::back_inserter(changed));
    for (const std::string& name : changed) {
      Track& track = tracks_[name];
      track.penalty = std::min(Decayed(track, now) + options_.change_penalty, max_penalty_);
      track.updated = now;
      track.changes.push_back(now);
      if (track.changes.size() > kMaxChangesKept) track.changes.pop_front();
    }
  }
  baseline_ = true;
  present_ = present;
  std::vector<DampedDevice> damped;
  for (auto it = tracks_.begin(); it != tracks_.end();) {
    Track& track = it->second;
    const double penalty = Decayed(track, now);
    while (!track.changes.empty() && now - track.changes.front() > options_.report_window) track.changes.pop_front();
    const int changes = static_cast<int>(track.changes.size());
    if (!track.damped && penalty > options_.suppress_above) {
      track.damped = true;
      track.damped_since = now;
      ++starts_;
      LogWarning("a flapping device is damped: its changes do not reach the API until it is stable",
                 {{"device", it->first},
                  {"changes", absl::StrCat(changes)},
                  {"window", absl::FormatDuration(options_.report_window)},
                  {"present", present.count(it->first) > 0 ? "true" : "false"}});
    } else if (track.damped && penalty < options_.reuse_below) {
      track.damped = false;
      LogInfo("a flapping device is stable again: published as it is",
              {{"device", it->first},
               {"damped_for", absl::FormatDuration(absl::Seconds(absl::ToInt64Seconds(now - track.damped_since)))},
               {"present", present.count(it->first) > 0 ? "true" : "false"}});
    }
    if (track.damped) {
      damped.push_back({it->first, changes, options_.report_window, track.damped_since});
    } else if (penalty < 1 && track.changes.empty()) {
      it = tracks_.erase(it);  // nothing left to remember
      continue;
    }
    ++it;
  }
  return damped;
}

}  // namespace liken::controller
