// Atomic file replacement: complete versions only, no symlink followed, invalid names refused.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/atomic_file.h"
#include "common/files.h"

namespace liken {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  AtomicFileTest() {
    char tmpl[] = "/tmp/liken-atomic-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~AtomicFileTest() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Read(const std::string& name) { return ReadFileToString(dir_ + "/" + name).value_or("<missing>"); }
  std::string dir_;
};

TEST_F(AtomicFileTest, WritesAndReplaces) {
  ASSERT_TRUE(WriteFileAtomically(dir_, "a.json", "one").ok());
  EXPECT_EQ(Read("a.json"), "one");
  ASSERT_TRUE(WriteFileAtomically(dir_, "a.json", "two").ok());
  EXPECT_EQ(Read("a.json"), "two");
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/a.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  auto names = ListDirectory(dir_);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 1u) << "no temp file is left behind";
}

TEST_F(AtomicFileTest, UnsyncedWritesReplaceAtomicallyToo) {
  ASSERT_TRUE(WriteFileAtomically(dir_, "a.json", "one", Durability::kUnsynced).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_, "a.json", "two", Durability::kUnsynced).ok());
  EXPECT_EQ(Read("a.json"), "two");
  auto names = ListDirectory(dir_);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 1u) << "no temp file is left behind";
}

TEST_F(AtomicFileTest, ABatchReplacesEveryFileAndABadNameFailsOnlyItself) {
  ASSERT_TRUE(WriteFileAtomically(dir_, "b.json", "old").ok());
  auto written = WriteFilesAtomically(dir_, {{"a.json", "A"}, {"../escape", "x"}, {"b.json", "B"}});
  ASSERT_EQ(written.size(), 3u);
  EXPECT_TRUE(written[0].ok()) << written[0];
  EXPECT_TRUE(absl::IsInvalidArgument(written[1])) << written[1];
  EXPECT_TRUE(written[2].ok()) << written[2];
  EXPECT_EQ(Read("a.json"), "A");
  EXPECT_EQ(Read("b.json"), "B");
  auto names = ListDirectory(dir_);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 2u) << "no temp file is left behind";
  auto missing = WriteFilesAtomically(dir_ + "/missing", {{"a.json", "A"}, {"b.json", "B"}});
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_TRUE(absl::IsNotFound(missing[0]) && absl::IsNotFound(missing[1]));
}

TEST_F(AtomicFileTest, ReplacesAPlantedSymlinkInsteadOfWritingThroughIt) {
  std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "precious";
  ASSERT_EQ(::symlink(victim.c_str(), (dir_ + "/spec.json").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir_, "spec.json", "new").ok());
  EXPECT_EQ(Read("victim"), "precious");
  struct stat st;
  ASSERT_EQ(::lstat((dir_ + "/spec.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(Read("spec.json"), "new");
}

TEST_F(AtomicFileTest, RefusesADirectoryThatIsASymlinkAndBadNames) {
  ASSERT_EQ(::symlink(dir_.c_str(), (dir_ + "/linked").c_str()), 0);
  EXPECT_FALSE(WriteFileAtomically(dir_ + "/linked", "x", "y").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFileAtomically(dir_, "../escape", "y")));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFileAtomically(dir_, "", "y")));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFileAtomically(dir_, "..", "y")));
  EXPECT_TRUE(absl::IsNotFound(WriteFileAtomically(dir_ + "/missing", "x", "y")));
}

TEST_F(AtomicFileTest, LeftoverTempFilesOfACrashedProcessDoNotBlockWrites) {
  // A crashed writer with this same PID (a restarted container's PID 1) left temp files behind.
  for (int i = 0; i < 32; ++i) {
    std::ofstream(dir_ + "/.c.json.tmp." + std::to_string(::getpid()) + "." + std::to_string(i)) << "junk";
  }
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(WriteFileAtomically(dir_, "c.json", "v" + std::to_string(i)).ok());
  EXPECT_EQ(Read("c.json"), "v31");
}

TEST_F(AtomicFileTest, ConcurrentWritersLeaveOneCompleteVersion) {
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&, t] {
      std::string content(4096 + t, static_cast<char>('a' + t));
      for (int i = 0; i < 50; ++i) ASSERT_TRUE(WriteFileAtomically(dir_, "shared", content).ok());
    });
  }
  for (auto& w : writers) w.join();
  std::string final = Read("shared");
  ASSERT_GE(final.size(), 4096u);
  EXPECT_EQ(final, std::string(final.size(), final[0]));
  EXPECT_EQ(final.size(), 4096u + (final[0] - 'a'));
}

TEST_F(AtomicFileTest, UnsyncedRemovalAndSyncDirectory) {
  ASSERT_TRUE(WriteFileAtomically(dir_, "u", "x").ok());
  EXPECT_TRUE(RemoveFileIfPresent(dir_, "u", Durability::kUnsynced).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/u"));
  EXPECT_TRUE(SyncDirectory(dir_).ok());
  EXPECT_TRUE(absl::IsNotFound(SyncDirectory(dir_ + "/missing")));
}

TEST_F(AtomicFileTest, RemoveIsIdempotentAndDoesNotFollowLinks) {
  ASSERT_TRUE(WriteFileAtomically(dir_, "r", "x").ok());
  EXPECT_TRUE(RemoveFileIfPresent(dir_, "r").ok());
  EXPECT_TRUE(RemoveFileIfPresent(dir_, "r").ok());
  std::string victim = dir_ + "/victim2";
  std::ofstream(victim) << "keep";
  ASSERT_EQ(::symlink(victim.c_str(), (dir_ + "/l").c_str()), 0);
  EXPECT_TRUE(RemoveFileIfPresent(dir_, "l").ok());
  EXPECT_EQ(Read("victim2"), "keep");
}

TEST_F(AtomicFileTest, ASymlinkedDirectoryIsRefusedByNameAndNothingInItsTargetRemoved) {
  ASSERT_EQ(::mkdir((dir_ + "/real").c_str(), 0755), 0);
  std::ofstream(dir_ + "/real/f") << "keep";
  ASSERT_EQ(::symlink((dir_ + "/real").c_str(), (dir_ + "/linked").c_str()), 0);
  auto opened = OpenDirectoryNoFollow(dir_ + "/linked");
  EXPECT_TRUE(absl::IsFailedPrecondition(opened.status())) << opened.status();
  EXPECT_NE(opened.status().message().find(dir_ + "/linked is a symlink"), std::string::npos) << opened.status();
  EXPECT_TRUE(absl::IsNotFound(OpenDirectoryNoFollow(dir_ + "/missing").status()));
  for (Durability d : {Durability::kSynced, Durability::kUnsynced}) {
    EXPECT_TRUE(absl::IsFailedPrecondition(RemoveFileIfPresent(dir_ + "/linked", "f", d)));
  }
  EXPECT_EQ(Read("real/f"), "keep");
}

TEST_F(AtomicFileTest, RemoveTreeRemovesLinksThemselvesNeverTheirTargets) {
  ASSERT_EQ(::mkdir((dir_ + "/victim").c_str(), 0755), 0);
  std::ofstream(dir_ + "/victim/keep") << "keep";
  ASSERT_TRUE(MakeDirectories(dir_ + "/tree/a/b").ok());
  std::ofstream(dir_ + "/tree/a/b/file") << "x";
  std::ofstream(dir_ + "/tree/top") << "x";
  ASSERT_EQ(::symlink((dir_ + "/victim").c_str(), (dir_ + "/tree/a/dirlink").c_str()), 0);
  ASSERT_EQ(::symlink((dir_ + "/victim/keep").c_str(), (dir_ + "/tree/a/b/filelink").c_str()), 0);
  auto root = OpenDirectoryNoFollow(dir_);
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE(RemoveTreeAt(root->get(), dir_, "tree").ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/tree"));
  EXPECT_EQ(Read("victim/keep"), "keep");
  EXPECT_TRUE(RemoveTreeAt(root->get(), dir_, "tree").ok()) << "absent: fine";
  EXPECT_TRUE(absl::IsInvalidArgument(RemoveTreeAt(root->get(), dir_, "..")));
  // An absolute name would make the *at call ignore the handle: refused.
  EXPECT_TRUE(absl::IsInvalidArgument(RemoveTreeAt(root->get(), dir_, dir_ + "/victim")));
  EXPECT_EQ(Read("victim/keep"), "keep");
}

TEST_F(AtomicFileTest, SubdirectoriesAreMadeAndOpenedWithoutFollowingALink) {
  auto root = OpenDirectoryNoFollow(dir_);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_TRUE(absl::IsNotFound(OpenDirectoryAt(root->get(), dir_, "sub", /*create=*/false).status()));
  auto sub = OpenDirectoryAt(root->get(), dir_, "sub", /*create=*/true);
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_TRUE(WriteFileAtomicallyAt(sub->get(), dir_ + "/sub", "f", "v").ok());
  EXPECT_EQ(Read("sub/f"), "v");
  ASSERT_EQ(::mkdir((dir_ + "/victim").c_str(), 0755), 0);
  ASSERT_EQ(::symlink((dir_ + "/victim").c_str(), (dir_ + "/planted").c_str()), 0);
  for (bool create : {false, true}) {
    auto planted = OpenDirectoryAt(root->get(), dir_, "planted", create);
    EXPECT_TRUE(absl::IsFailedPrecondition(planted.status())) << planted.status();
    EXPECT_NE(planted.status().message().find(dir_ + "/planted is a symlink"), std::string::npos) << planted.status();
  }
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenDirectoryAt(root->get(), dir_, "file", true).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(OpenDirectoryAt(root->get(), dir_, dir_ + "/victim", false).status()));
}

TEST_F(AtomicFileTest, AListingThroughAHandleLeavesItsOffsetAlone) {
  std::ofstream(dir_ + "/b") << "x";
  std::ofstream(dir_ + "/a") << "x";
  auto root = OpenDirectoryNoFollow(dir_);
  ASSERT_TRUE(root.ok()) << root.status();
  for (int i = 0; i < 2; ++i) {  // a listing through a dup(2) of the handle would leave the second one empty
    auto names = ListDirectoryAt(root->get(), dir_);
    ASSERT_TRUE(names.ok()) << names.status();
    EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
  }
}

}  // namespace
}  // namespace liken
