#include "kubelet/claim_checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::kubelet {
namespace {

using ::liken::testing::TempDir;

PreparedClaim SampleClaim(const std::string& uid) {
  PreparedClaim c;
  c.ref = {"ns", uid, "serial"};
  c.results.push_back({{"port"}, "node-a", "usb-1-2-1-0", {"liken.sh/device=" + uid + "-usb-1-2-1-0"}, "share-1"});
  auto d = ::liken::testing::UsbSerial("/sys/devices/pci0000:00/usb1/1-2");
  c.delivered.push_back({d.name, d.nodes, d.usb_interfaces, d.sysfs_path, {}});
  return c;
}

TEST(ClaimCheckpointTest, RecordRoundTrips) {
  PreparedClaim c = SampleClaim("uid-1");
  auto parsed = ParsePreparedClaim(PreparedClaimToJson(c, "boot-x"));
  LIKEN_ASSERT_OK(parsed);
  EXPECT_EQ(parsed->claim, c);
  EXPECT_EQ(parsed->boot_id, "boot-x");
}

TEST(ClaimCheckpointTest, SaveLoadRemoveAndBootSeparation) {
  TempDir dir;
  ClaimCheckpoint now(dir.path() + "/claims", "boot-2");
  ClaimCheckpoint before(dir.path() + "/claims", "boot-1");
  LIKEN_ASSERT_OK(now.EnsureDirectory());
  LIKEN_ASSERT_OK(before.Save(SampleClaim("old")));
  LIKEN_ASSERT_OK(now.Save(SampleClaim("new")));
  std::ofstream(dir.path() + "/claims/broken.json") << "{not json";
  auto contents = now.Load();
  LIKEN_ASSERT_OK(contents);
  ASSERT_EQ(contents->current_boot.size(), 1u);
  EXPECT_EQ(contents->current_boot[0], SampleClaim("new"));
  EXPECT_EQ(contents->previous_boot_uids, std::vector<std::string>{"old"});
  EXPECT_EQ(contents->unreadable_uids, std::vector<std::string>{"broken"});
  EXPECT_TRUE(now.Exists("new"));
  EXPECT_TRUE(now.Exists("broken"));
  LIKEN_ASSERT_OK(now.Remove("new"));
  LIKEN_ASSERT_OK(now.Remove("new"));
  EXPECT_FALSE(now.Exists("new"));
  contents = now.Load();
  LIKEN_ASSERT_OK(contents);
  EXPECT_TRUE(contents->current_boot.empty());
}

TEST(ClaimCheckpointTest, RejectsMalformedRecords) {
  for (const char* text : {"", "[]", R"({"version":2})", R"({"version":1,"bootID":"b"})",
                           R"({"version":1,"bootID":"b","claim":{"namespace":"n","uid":"","name":"x"},"results":[],"delivered":[]})"}) {
    EXPECT_EQ(ParsePreparedClaim(text).status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

TEST(ClaimCheckpointTest, LoadingAMissingDirectoryFindsNothing) {
  TempDir dir;
  ClaimCheckpoint cp(dir.path() + "/absent", "b");
  auto contents = cp.Load();
  LIKEN_ASSERT_OK(contents);
  EXPECT_TRUE(contents->current_boot.empty());
}

}  // namespace
}  // namespace liken::kubelet

namespace liken::kubelet {
namespace {

TEST(ClaimCheckpointFilesTest, AFifoRecordIsUnreadableAtOnceWithItsReason) {
  ::alarm(120);  // a watchdog, not a timed assertion: a blocking open of a FIFO never returns
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/claims", "boot-1");
  LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim("good")));
  ASSERT_EQ(::mkfifo((dir.path() + "/claims/fifo.json").c_str(), 0644), 0);
  auto contents = checkpoint.Load();
  ::alarm(0);
  LIKEN_ASSERT_OK(contents);
  ASSERT_EQ(contents->current_boot.size(), 1u);
  EXPECT_EQ(contents->unreadable_uids, std::vector<std::string>{"fifo"});
  ASSERT_EQ(contents->unreadable_errors.size(), 1u);
  EXPECT_THAT(std::string(contents->unreadable_errors[0].message()), ::testing::HasSubstr("is a FIFO"));
  LIKEN_ASSERT_OK(checkpoint.Remove("fifo"));
  EXPECT_FALSE(checkpoint.Exists("fifo"));
}

TEST(ClaimCheckpointFilesTest, SaveRecreatesAVanishedDirectory) {
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/plugins/liken.sh/claims", "boot-1");
  LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim("a")));
  std::filesystem::remove_all(dir.path() + "/plugins");
  EXPECT_FALSE(checkpoint.DirectoryExists());
  LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim("a")));
  EXPECT_TRUE(checkpoint.Exists("a"));
}

TEST(ClaimCheckpointFilesTest, SaveBatchRecordsEveryClaimAndRecreatesAVanishedDirectory) {
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/plugins/liken.sh/claims", "boot-1");
  LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim("old")));
  std::filesystem::remove_all(dir.path() + "/plugins");
  std::vector<PreparedClaim> claims = {SampleClaim("a"), SampleClaim("b"), SampleClaim("c")};
  auto saved = checkpoint.SaveBatch({&claims[0], &claims[1], &claims[2]});
  ASSERT_EQ(saved.size(), 3u);
  for (const auto& s : saved) EXPECT_TRUE(s.ok()) << s;
  auto contents = checkpoint.Load();
  LIKEN_ASSERT_OK(contents);
  EXPECT_THAT(contents->current_boot, ::testing::UnorderedElementsAreArray(claims));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(checkpoint.dir()), {}), 3) << "no temp file left";
}

TEST(ClaimCheckpointFilesTest, RemovalsOfPresentAndAbsentRecords) {
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/plugins/liken.sh/claims", "boot-1");
  for (const char* uid : {"a", "b", "c"}) LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim(uid)));
  LIKEN_ASSERT_OK(checkpoint.Remove("a"));
  LIKEN_ASSERT_OK(checkpoint.Remove("b"));
  LIKEN_ASSERT_OK(checkpoint.Remove("b"));  // already absent
  EXPECT_FALSE(checkpoint.Exists("a"));
  EXPECT_FALSE(checkpoint.Exists("b"));
  EXPECT_TRUE(checkpoint.Exists("c"));
  std::filesystem::remove_all(dir.path() + "/plugins");
  EXPECT_TRUE(checkpoint.Remove("c").ok()) << "no directory, no record";
}

// Records are not fsynced: after a power loss a renamed record can come back empty (ext4, xfs) or as zeros (its size
// reached the disk, its data did not). Only a power loss makes one, so it is of an earlier boot; a record that is
// merely garbage (a newer version, damage) stays unreadable and keeps its claim's CDI spec.
TEST(ClaimCheckpointFilesTest, EmptyOrZeroRecordsAreOfAnEarlierBoot) {
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/claims", "boot-2");
  LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim("kept")));
  std::ofstream(dir.path() + "/claims/empty.json");
  std::ofstream(dir.path() + "/claims/zeros.json") << std::string(300, '\0');
  std::ofstream(dir.path() + "/claims/garbage.json") << std::string(300, '\0') << "x";
  auto contents = checkpoint.Load();
  LIKEN_ASSERT_OK(contents);
  ASSERT_EQ(contents->current_boot.size(), 1u);
  EXPECT_EQ(contents->current_boot[0], SampleClaim("kept"));
  EXPECT_THAT(contents->previous_boot_uids, ::testing::UnorderedElementsAre("empty", "zeros"));
  EXPECT_EQ(contents->unreadable_uids, std::vector<std::string>{"garbage"});
}

TEST(ClaimCheckpointFilesTest, RemovesTempFilesOfOneClaimOrAll) {
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/claims", "boot-1");
  LIKEN_ASSERT_OK(checkpoint.EnsureDirectory());
  for (const char* name : {".a.json.tmp.1.f", ".b.json.tmp.1.f", ".b.json.tmp.9.e"}) {
    std::ofstream(dir.path() + "/claims/" + name) << "{";
  }
  LIKEN_ASSERT_OK(checkpoint.Save(SampleClaim("a")));
  auto one = checkpoint.RemoveTempFiles("a");
  LIKEN_ASSERT_OK(one);
  EXPECT_EQ(*one, 1);
  auto all = checkpoint.RemoveTempFiles(std::nullopt);
  LIKEN_ASSERT_OK(all);
  EXPECT_EQ(*all, 2);
  EXPECT_TRUE(checkpoint.Exists("a")) << "a record is no temp file";
}

TEST(ClaimCheckpointFilesTest, ASymlinkedDirectoryHoldsNoRecordAndLosesNothing) {
  TempDir dir;
  ClaimCheckpoint real(dir.path() + "/real", "boot-1");
  LIKEN_ASSERT_OK(real.EnsureDirectory());
  LIKEN_ASSERT_OK(real.Save(SampleClaim("u1")));
  ASSERT_EQ(::symlink((dir.path() + "/real").c_str(), (dir.path() + "/linked").c_str()), 0);
  ClaimCheckpoint linked(dir.path() + "/linked", "boot-1");
  EXPECT_FALSE(linked.Exists("u1"));
  EXPECT_FALSE(linked.Remove("u1").ok());
  EXPECT_FALSE(linked.LockDirectory().ok());
  EXPECT_TRUE(real.Exists("u1"));
}

TEST(ClaimCheckpointFilesTest, DirectoryLockExcludesASecondLockOfTheSameProcess) {
  TempDir dir;
  ClaimCheckpoint checkpoint(dir.path() + "/claims", "boot-1");
  auto first = checkpoint.LockDirectory();  // creates the directory
  LIKEN_ASSERT_OK(first);
  EXPECT_TRUE(checkpoint.DirectoryExists());
  int fd = ::open((dir.path() + "/claims").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0) << "the lock is not held";
  first = absl::InternalError("released");  // destroys the lock
  EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ::close(fd);
}

}  // namespace
}  // namespace liken::kubelet
