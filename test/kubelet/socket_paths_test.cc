#include "kubelet/socket_paths.h"

#include <gtest/gtest.h>

#include "test/kubelet/test_support.h"

namespace liken::kubelet {
namespace {

TEST(SocketPathsTest, DefaultNames) {
  auto p = ComputeSocketPaths("/var/lib/kubelet", "liken.sh", "");
  LIKEN_ASSERT_OK(p);
  EXPECT_EQ(p->registration, "/var/lib/kubelet/plugins_registry/liken.sh-reg.sock");
  EXPECT_EQ(p->dra, "/var/lib/kubelet/plugins/liken.sh/dra.sock");
  EXPECT_EQ(p->registration_dir, "/var/lib/kubelet/plugins_registry");
  EXPECT_EQ(p->plugin_dir, "/var/lib/kubelet/plugins/liken.sh");
}

TEST(SocketPathsTest, TrailingSlashOnTheRootIsIgnored) {
  auto p = ComputeSocketPaths("/var/lib/kubelet/", "liken.sh", "");
  LIKEN_ASSERT_OK(p);
  EXPECT_EQ(p->dra, "/var/lib/kubelet/plugins/liken.sh/dra.sock");
}

TEST(SocketPathsTest, PodUidInBothNames) {
  auto p = ComputeSocketPaths("/var/lib/kubelet", "liken.sh", "0b3a8e52-1111-4222-8333-444455556666");
  LIKEN_ASSERT_OK(p);
  EXPECT_EQ(p->registration,
            "/var/lib/kubelet/plugins_registry/liken.sh-0b3a8e52-1111-4222-8333-444455556666-reg.sock");
  EXPECT_EQ(p->dra, "/var/lib/kubelet/plugins/liken.sh/dra-0b3a8e52-1111-4222-8333-444455556666.sock");
}

TEST(SocketPathsTest, LongPathsFallBackToAHashOfTheUid) {
  const std::string root = "/var/lib/kubelet-root-moved-somewhere-deeper";  // 44 bytes
  const std::string uid = "0b3a8e52-1111-4222-8333-444455556666";
  auto p = ComputeSocketPaths(root, "liken.sh", uid);
  LIKEN_ASSERT_OK(p);
  EXPECT_LE(p->registration.size(), kMaxSocketPathLength);
  EXPECT_LE(p->dra.size(), kMaxSocketPathLength);
  EXPECT_EQ(p->registration.find(uid), std::string::npos);
  EXPECT_EQ(p->registration.rfind(root + "/plugins_registry/liken.sh-", 0), 0u);
  // Deterministic, and different for another pod.
  auto again = ComputeSocketPaths(root, "liken.sh", uid);
  auto other = ComputeSocketPaths(root, "liken.sh", "0b3a8e52-1111-4222-8333-444455556667");
  LIKEN_ASSERT_OK(again);
  LIKEN_ASSERT_OK(other);
  EXPECT_EQ(again->registration, p->registration);
  EXPECT_NE(other->registration, p->registration);
}

TEST(SocketPathsTest, RejectsRootsTooLongEvenWithAHash) {
  auto p = ComputeSocketPaths("/" + std::string(120, 'x'), "liken.sh", "");
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SocketPathsTest, RejectsPodUidsWithPathCharacters) {
  EXPECT_EQ(ComputeSocketPaths("/var/lib/kubelet", "liken.sh", "../x").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace liken::kubelet
