#include "cdi/claim_spec_store.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cdi/claim_spec.h"
#include "common/files.h"

namespace liken::cdi {
namespace {

class ClaimSpecStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/liken-cdi-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    store_ = std::make_unique<ClaimSpecStore>(dir_ + "/run/cdi");
    ASSERT_TRUE(store_->EnsureDirectory().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  std::unique_ptr<ClaimSpecStore> store_;
};

TEST_F(ClaimSpecStoreTest, WriteReadListRemove) {
  Spec spec = MakeClaimSpec("u1", {{"dev", {{"/dev/a", "c", 1, 2}}}});
  ASSERT_TRUE(store_->Write("u1", spec).ok());
  ASSERT_TRUE(store_->Write("u2", MakeClaimSpec("u2", {})).ok());
  EXPECT_TRUE(store_->Exists("u1"));
  auto read = store_->Read("u1");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, spec);
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/run/cdi/liken.sh-u1.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::ofstream(dir_ + "/run/cdi/other-vendor.json") << "{}";
  auto uids = store_->ListClaimUids();
  ASSERT_TRUE(uids.ok());
  EXPECT_EQ(*uids, (std::vector<std::string>{"u1", "u2"}));
  ASSERT_TRUE(store_->Remove("u1").ok());
  ASSERT_TRUE(store_->Remove("u1").ok());
  EXPECT_FALSE(store_->Exists("u1"));
  EXPECT_EQ(store_->Read("u1").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ClaimSpecStoreTest, PlantedSymlinkIsNeitherReadNorWrittenThrough) {
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "precious";
  const std::string link = dir_ + "/run/cdi/liken.sh-u1.json";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  EXPECT_FALSE(store_->Exists("u1"));
  EXPECT_EQ(store_->Read("u1").status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->Write("u1", MakeClaimSpec("u1", {})).ok());
  EXPECT_TRUE(store_->Exists("u1"));
  EXPECT_EQ(*ReadFileToString(victim), "precious");
}

TEST_F(ClaimSpecStoreTest, SymlinkedDirectoryIsRefused) {
  const std::string real = dir_ + "/elsewhere";
  ASSERT_EQ(::mkdir(real.c_str(), 0755), 0);
  const std::string link = dir_ + "/linked";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  ClaimSpecStore store(link);
  EXPECT_FALSE(store.Write("u1", MakeClaimSpec("u1", {})).ok());
  EXPECT_FALSE(std::filesystem::exists(real + "/liken.sh-u1.json"));
}

TEST_F(ClaimSpecStoreTest, RemoveThroughASymlinkedDirectoryRemovesNothing) {
  // The CDI root is a link to a directory holding a file named like a claim's spec: neither store removes it.
  const std::string real = dir_ + "/elsewhere";
  ASSERT_EQ(::mkdir(real.c_str(), 0755), 0);
  std::ofstream(real + "/liken.sh-u1.json") << "precious";
  const std::string link = dir_ + "/linked";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  for (liken::Durability d : {liken::Durability::kSynced, liken::Durability::kUnsynced}) {
    ClaimSpecStore store(link, d);
    absl::Status removed = store.Remove("u1");
    EXPECT_EQ(removed.code(), absl::StatusCode::kFailedPrecondition) << removed;
    EXPECT_NE(removed.message().find("symlink"), std::string::npos) << removed;
  }
  EXPECT_EQ(*ReadFileToString(real + "/liken.sh-u1.json"), "precious");
}

TEST_F(ClaimSpecStoreTest, GarbageSpecIsInvalidArgument) {
  std::ofstream(dir_ + "/run/cdi/liken.sh-u1.json") << "not json";
  EXPECT_EQ(store_->Read("u1").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ClaimSpecStoreTest, ListingAMissingDirectoryFindsNothing) {
  ClaimSpecStore store(dir_ + "/absent");
  auto uids = store.ListClaimUids();
  ASSERT_TRUE(uids.ok());
  EXPECT_TRUE(uids->empty());
}

TEST_F(ClaimSpecStoreTest, AFifoIsRefusedAtOnceNotWaitedOn) {
  ::alarm(120);  // a watchdog, not a timed assertion: a blocking open of a FIFO never returns
  ASSERT_EQ(::mkfifo((dir_ + "/run/cdi/liken.sh-f1.json").c_str(), 0644), 0);
  auto read = store_->Read("f1");
  ::alarm(0);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(read.status().message().find("is a FIFO"), std::string::npos) << read.status();
  EXPECT_FALSE(store_->Exists("f1"));
  EXPECT_TRUE(store_->Remove("f1").ok());
}

TEST_F(ClaimSpecStoreTest, WriteRecreatesAVanishedDirectory) {
  std::filesystem::remove_all(dir_ + "/run");
  EXPECT_FALSE(store_->DirectoryExists());
  auto written = store_->Write("u1", MakeClaimSpec("u1", {}));
  ASSERT_TRUE(written.ok()) << written;
  EXPECT_TRUE(store_->Exists("u1"));
}

TEST_F(ClaimSpecStoreTest, RemovesOnlyLikenTempFiles) {
  for (const char* name : {".liken.sh-u1.json.tmp.1.f", ".liken.sh-u2.json.tmp.1.f", ".vendor-x.json.tmp.1.f"}) {
    std::ofstream(dir_ + "/run/cdi/" + name) << "{";
  }
  auto one = store_->RemoveTempFiles("u1");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, 1);
  auto all = store_->RemoveTempFiles(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, 1);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/run/cdi/.vendor-x.json.tmp.1.f"));
}

}  // namespace
}  // namespace liken::cdi
