// Flap damping on a fake clock: a single plug or unplug, and a reseated cable, are never damped; a device that
// flaps is, until it has been stable for a while; the damping's figures as FlapDampingOptions documents them.
#include "controller/flap_damper.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/common/fake_clock.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClock;

std::vector<std::string> Names(const std::vector<DampedDevice>& damped) {
  std::vector<std::string> names;
  for (const auto& d : damped) names.push_back(d.name);
  return names;
}

const std::set<std::string> kWith = {"usb-1-1", "usb-1-2"};
const std::set<std::string> kWithout = {"usb-1-1"};

TEST(FlapDamperTest, SinglePlugUnplugAndAReseatedCableAreNeverDamped) {
  FakeClock clock;
  FlapDamper damper(&clock, FlapDampingOptions{});
  EXPECT_TRUE(damper.Observe(kWithout).empty()) << "the first pass is the baseline";
  clock.Advance(absl::Milliseconds(100));
  EXPECT_TRUE(damper.Observe(kWith).empty()) << "a plug";
  clock.Advance(absl::Milliseconds(300));
  EXPECT_TRUE(damper.Observe(kWithout).empty()) << "an unplug right after";
  clock.Advance(absl::Seconds(30));
  EXPECT_TRUE(damper.Observe(kWith).empty()) << "plugged back later";
  EXPECT_EQ(damper.starts(), 0u);
}

TEST(FlapDamperTest, AFlappingDeviceIsDampedUntilStableThenReleased) {
  FakeClock clock;
  FlapDamper damper(&clock, FlapDampingOptions{});
  damper.Observe(kWith);
  // 10 Hz for 20 s: a change every 100 ms.
  std::vector<DampedDevice> damped;
  int passes_damped = 0;
  for (int i = 1; i <= 200; ++i) {
    clock.Advance(absl::Milliseconds(100));
    damped = damper.Observe(i % 2 == 1 ? kWithout : kWith);
    if (!damped.empty()) ++passes_damped;
    if (i <= 2) {
      EXPECT_TRUE(damped.empty()) << "change " << i << " reaches the slice at once";
    }
  }
  EXPECT_EQ(passes_damped, 198) << "damped from the third change on";
  ASSERT_EQ(Names(damped), (std::vector<std::string>{"usb-1-2"}));
  EXPECT_EQ(damped[0].Reason(), "flapping: 200 changes in the last 60 s");
  EXPECT_EQ(damper.starts(), 1u) << "logged and counted once";
  // Stable from now (present): damped while the penalty decays, released within max_damped, when UntilRelease says.
  const absl::Duration until = damper.UntilRelease();
  EXPECT_GT(until, absl::Seconds(59));
  EXPECT_LE(until, absl::Seconds(61));
  clock.Advance(absl::Seconds(30));
  EXPECT_EQ(Names(damper.Observe(kWith)), (std::vector<std::string>{"usb-1-2"})) << "30 s stable is not enough";
  clock.Advance(absl::Seconds(31));
  EXPECT_TRUE(damper.Observe(kWith).empty()) << "released once stable for max_damped (60 s)";
  EXPECT_EQ(damper.starts(), 1u);
  EXPECT_EQ(damper.UntilRelease(), absl::InfiniteDuration()) << "none damped";
}

TEST(FlapDamperTest, ReportCountsOnlyTheChangesInTheWindowAndBoundsWhatItKeeps) {
  FakeClock clock;
  FlapDampingOptions options;
  options.max_damped = absl::Hours(1);
  FlapDamper damper(&clock, options);
  damper.Observe(kWith);
  for (int i = 1; i <= 3000; ++i) {
    clock.Advance(absl::Milliseconds(10));
    damper.Observe(i % 2 == 1 ? kWithout : kWith);
  }
  // 3000 changes within 30 s, all in the window: only the newest kMaxChangesKept are kept and counted.
  clock.Advance(absl::Seconds(5));
  auto damped = damper.Observe(kWith);
  ASSERT_EQ(damped.size(), 1u);
  EXPECT_EQ(damped[0].changes, static_cast<int>(FlapDamper::kMaxChangesKept));
  // 50 s later the window (60 s) holds only the changes of the last 5 s of flapping, at 100 a second.
  clock.Advance(absl::Seconds(50));
  damped = damper.Observe(kWith);
  ASSERT_EQ(damped.size(), 1u);
  EXPECT_NEAR(damped[0].changes, 500, 2) << damped[0].Reason();
}

TEST(FlapDamperTest, OffDampsNothing) {
  FakeClock clock;
  FlapDamper damper(&clock, FlapDampingOptions{.enabled = false});
  damper.Observe(kWith);
  for (int i = 1; i <= 50; ++i) {
    clock.Advance(absl::Milliseconds(100));
    EXPECT_TRUE(damper.Observe(i % 2 == 1 ? kWithout : kWith).empty());
  }
}

}  // namespace
}  // namespace liken::controller
