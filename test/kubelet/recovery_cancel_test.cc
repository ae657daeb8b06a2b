// Start-up recovery cancelled: a stop requested before or during Recover ends it at once, at a record boundary, with
// nothing half-written (every claim has all of its restored files or none, no temp file is left, no record changed).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cdi/cdi_spec.h"
#include "common/files.h"
#include "kubelet/kubelet_plugin.h"
#include "nodestate/prepared_claims.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/fake_scanner.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::testing {
namespace {

constexpr char kNode[] = "node-a";
constexpr int kClaims = 20;

std::string Uid(int i) { return absl::StrCat("0000000a-0000-4000-8000-", 100000000000 + i); }

// Requests a stop from inside the recovery, synchronously, when it reports the `stop_after`-th recovered claim: the
// recovery's next step is the one that must notice it. Records which claims it reported.
class StopAfter : public nodestate::PreparedClaimEvents {
 public:
  StopAfter(std::stop_source* source, int stop_after) : source_(source), stop_after_(stop_after) {}
  void SetPrepared(nodestate::PreparedClaimDevices claim) override {
    absl::MutexLock lock(&mu_);
    recovered_.insert(claim.uid);
    if (static_cast<int>(recovered_.size()) == stop_after_) source_->request_stop();
  }
  void SetUnprepared(const std::string&, const std::string&, const std::string&) override {}
  std::set<std::string> recovered() const {
    absl::MutexLock lock(&mu_);
    return recovered_;
  }

 private:
  std::stop_source* const source_;
  const int stop_after_;
  mutable absl::Mutex mu_;
  std::set<std::string> recovered_ ABSL_GUARDED_BY(mu_);
};

// Every file under `dir` (relative paths), or none when it is absent.
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory()) out.insert(std::filesystem::relative(it->path(), dir).string());
  }
  return out;
}

class RecoveryCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path() + "/boot_id") << "boot-1\n";
    inventory_ = InventoryOf({GpuRender()});
    scanner_.Set(inventory_);
    for (int i = 0; i < kClaims; ++i) {
      lookup_.Add(ClaimJson("ns", absl::StrCat("claim-", i), Uid(i), kNode, {{"gpu", "pci-0000-00-02-0"}}));
    }
    // Prepared by a first run, whose CDI specs and metadata files were then lost (a tmpfs after a restart of the
    // node's runtime): the recovery has to write both for every claim.
    {
      auto plugin = std::make_unique<kubelet::KubeletPlugin>(Options(), &scanner_, &lookup_, nullptr);
      LIKEN_ASSERT_OK(plugin->Start());
      plugin->UpdateInventory(inventory_);
      auto k = TestKubelet::Register(kubelet_root(), DraVersion::kV1);
      LIKEN_ASSERT_OK(k);
      std::vector<kubelet::ClaimRef> refs;
      for (int i = 0; i < kClaims; ++i) refs.push_back({"ns", Uid(i), absl::StrCat("claim-", i)});
      auto answer = (*k)->Prepare(refs);
      LIKEN_ASSERT_OK(answer);
      for (const auto& [uid, a] : *answer) ASSERT_EQ(a.error, "") << uid;
    }
    std::filesystem::remove_all(cdi_root());
    std::filesystem::remove_all(metadata_root());
    ASSERT_TRUE(std::filesystem::create_directories(cdi_root()));
    // Left by a crashed run: a temp file, and the spec of a claim no record names (the final sweep removes it).
    std::ofstream(records_dir() + "/." + Uid(0) + ".json.tmp.1.abc") << "{";
    std::ofstream(cdi_root() + "/liken.sh-0000000b-0000-4000-8000-000000000001.json") << "{}";
    records_before_ = Read(records_dir());
    ASSERT_EQ(records_before_.size(), static_cast<size_t>(kClaims) + 1);
  }

  kubelet::KubeletPluginOptions Options() const {
    kubelet::KubeletPluginOptions o;
    o.node_name = kNode;
    o.kubelet_root = kubelet_root();
    o.cdi_root = cdi_root();
    o.metadata_root = metadata_root();
    o.sysfs_root = dir_.path() + "/sys";
    o.boot_id_path = dir_.path() + "/boot_id";
    o.shutdown_grace = absl::Seconds(5);
    return o;
  }
  std::string kubelet_root() const { return dir_.path() + "/kubelet"; }
  std::string cdi_root() const { return dir_.path() + "/cdi"; }
  std::string metadata_root() const { return dir_.path() + "/metadata"; }
  std::string records_dir() const { return kubelet_root() + "/plugins/liken.sh/claims"; }

  // Each file's content, by name, of one directory.
  static std::map<std::string, std::string> Read(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& name : FilesUnder(dir)) out[name] = ReadFileToString(dir + "/" + name).value_or("<unreadable>");
    return out;
  }

  TempDir dir_;
  discovery::Inventory inventory_;
  FakeScanner scanner_;
  FakeClaimLookup lookup_;
  std::map<std::string, std::string> records_before_;
};

TEST_F(RecoveryCancelTest, AStopRequestedBeforeRecoveryTouchesNothing) {
  std::stop_source stop;
  stop.request_stop();
  StopAfter listener(&stop, kClaims + 1);
  kubelet::KubeletPluginOptions o = Options();
  o.claim_events = &listener;
  kubelet::KubeletPlugin plugin(o, &scanner_, &lookup_, nullptr);
  absl::Status started = plugin.Start(stop.get_token());
  EXPECT_TRUE(absl::IsCancelled(started)) << started;
  EXPECT_THAT(listener.recovered(), ::testing::IsEmpty());
  EXPECT_EQ(Read(records_dir()), records_before_) << "a record, or the crash's temp file, was changed or removed";
  EXPECT_THAT(FilesUnder(cdi_root()), ::testing::ElementsAre("liken.sh-0000000b-0000-4000-8000-000000000001.json"));
  EXPECT_THAT(FilesUnder(metadata_root()), ::testing::IsEmpty());
}

TEST_F(RecoveryCancelTest, AStopRequestedDuringRecoveryEndsItAtTheNextRecord) {
  constexpr int kStopAfter = 7;
  std::stop_source stop;
  StopAfter listener(&stop, kStopAfter);
  kubelet::KubeletPluginOptions o = Options();
  o.claim_events = &listener;
  kubelet::KubeletPlugin plugin(o, &scanner_, &lookup_, nullptr);
  absl::Status started = plugin.Start(stop.get_token());
  EXPECT_TRUE(absl::IsCancelled(started)) << started;
  // Exactly the claims recovered before the stop have their files, each complete; no other claim has any.
  const std::set<std::string> recovered = listener.recovered();
  ASSERT_EQ(recovered.size(), static_cast<size_t>(kStopAfter)) << "recovery went on past the stop";
  std::set<std::string> want_specs = {"liken.sh-0000000b-0000-4000-8000-000000000001.json"};  // the sweep never ran
  std::set<std::string> want_metadata;
  for (const auto& uid : recovered) {
    want_specs.insert(absl::StrCat("liken.sh-", uid, ".json"));
    want_metadata.insert(absl::StrCat(uid, "/gpu/liken.sh-metadata.json"));
  }
  EXPECT_EQ(FilesUnder(cdi_root()), want_specs) << "a spec half-restored, or one of a claim not recovered";
  EXPECT_EQ(FilesUnder(metadata_root()), want_metadata) << "metadata of a claim not recovered, or a temp file";
  for (const auto& uid : recovered) {
    auto text = ReadFileToString(absl::StrCat(cdi_root(), "/liken.sh-", uid, ".json"));
    LIKEN_ASSERT_OK(text);
    auto spec = cdi::ParseSpec(*text);
    EXPECT_TRUE(spec.ok()) << uid << ": " << spec.status();
  }
  // The records stay as they were (the crash's temp file too: it is removed under the lock, before any record).
  std::map<std::string, std::string> records = Read(records_dir());
  records.erase("." + Uid(0) + ".json.tmp.1.abc");
  std::map<std::string, std::string> before = records_before_;
  before.erase("." + Uid(0) + ".json.tmp.1.abc");
  EXPECT_EQ(records, before);

  // The next start recovers every claim and sweeps what no record names.
  kubelet::KubeletPlugin again(Options(), &scanner_, &lookup_, nullptr);
  LIKEN_ASSERT_OK(again.Start());
  EXPECT_EQ(again.prepared_claims(), static_cast<size_t>(kClaims));
  EXPECT_EQ(FilesUnder(cdi_root()).size(), static_cast<size_t>(kClaims));
  EXPECT_EQ(FilesUnder(metadata_root()).size(), static_cast<size_t>(kClaims));
}

}  // namespace
}  // namespace liken::testing
