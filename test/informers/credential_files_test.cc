#include "informers/credential_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/files.h"
#include "test/informers/temp_files.h"
#include "test/informers/test_pki.h"

namespace liken::informers {
namespace {

using liken::testing::MakeTestCa;
using liken::testing::MakeTestLeaf;
using liken::testing::TestKeyPair;

std::string TempDir() { return liken::testing::MakeTempDir("liken-credentials"); }

void WriteFile(const std::string& path, const std::string& text) { liken::testing::WriteTextFile(path, text); }

using liken::testing::SetMtime;

// The certificates every test uses, made once (key generation is the slow part).
struct Pki {
  TestKeyPair ca1 = MakeTestCa("ca-one");
  TestKeyPair ca2 = MakeTestCa("ca-two");
  TestKeyPair client1 = MakeTestLeaf(ca1, "node-a", /*server=*/false);
  TestKeyPair client2 = MakeTestLeaf(ca1, "node-b", /*server=*/false);
};

const Pki& Certs() {
  static const Pki* pki = new Pki();
  return *pki;
}

class CredentialFilesTest : public ::testing::Test {
 protected:
  // A reader that counts its calls and can be made to fail.
  CredentialFiles::FileReader CountingReader() {
    return [this](const std::string& path) -> absl::StatusOr<std::string> {
      ++reads_;
      if (fail_reads_) return absl::PermissionDeniedError("denied by the test");
      return ReadFileToString(path);
    };
  }

  std::unique_ptr<CredentialFiles> Create(const KubeConfig& config) {
    auto files = CredentialFiles::Create(config, CountingReader());
    EXPECT_TRUE(files.ok()) << files.status();
    return files.ok() ? *std::move(files) : nullptr;
  }

  // A config whose CA comes from `ca_file` (written with `pem`), as LoadKubeconfig makes it.
  KubeConfig WithCaFile(const std::string& ca_file, const std::string& pem) {
    WriteFile(ca_file, pem);
    KubeConfig config;
    config.ca_file = ca_file;
    config.ca_pem = pem;
    return config;
  }

  std::string dir_ = TempDir();
  std::atomic<int> reads_{0};
  std::atomic<bool> fail_reads_{false};
};

TEST_F(CredentialFilesTest, UnchangedFilesAreNeitherReadNorParsedAgain) {
  KubeConfig config = WithCaFile(dir_ + "/ca.crt", Certs().ca1.cert_pem);
  WriteFile(dir_ + "/client.crt", Certs().client1.cert_pem);
  WriteFile(dir_ + "/client.key", Certs().client1.key_pem);
  config.client_cert_file = dir_ + "/client.crt";
  config.client_cert_pem = Certs().client1.cert_pem;
  config.client_key_file = dir_ + "/client.key";
  config.client_key_pem = Certs().client1.key_pem;
  auto files = Create(config);
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(reads_.load(), 3) << "each file is read once at start";
  auto first = files->Current();
  ASSERT_NE(first->trust, nullptr);
  ASSERT_NE(first->identity, nullptr);
  EXPECT_EQ(first->generation, 1u);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(files->Refresh(), first) << "the same snapshot, not a re-parsed copy";
  }
  EXPECT_EQ(reads_.load(), 3);
  EXPECT_EQ(files->reads(), 0);
}

TEST_F(CredentialFilesTest, InlineDataIsNeverRead) {
  KubeConfig config;
  config.ca_pem = Certs().ca1.cert_pem;
  config.client_cert_pem = Certs().client1.cert_pem;
  config.client_key_pem = Certs().client1.key_pem;
  auto files = Create(config);
  ASSERT_NE(files, nullptr);
  auto first = files->Refresh();
  EXPECT_NE(first->trust, nullptr);
  EXPECT_EQ(first->identity->Subject(), "CN=node-a");
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(reads_.load(), 0);
}

TEST_F(CredentialFilesTest, AChangedCaFileIsPickedUp) {
  const std::string ca_file = dir_ + "/ca.crt";
  auto files = Create(WithCaFile(ca_file, Certs().ca1.cert_pem));
  ASSERT_NE(files, nullptr);
  auto first = files->Current();
  EXPECT_EQ(first->trust->size(), 1);
  WriteFile(ca_file, Certs().ca1.cert_pem + Certs().ca2.cert_pem);  // rewritten in place: size and mtime change
  SetMtime(ca_file, 12345);
  auto second = files->Refresh();
  EXPECT_EQ(second->generation, 2u);
  EXPECT_EQ(second->trust->size(), 2);
  EXPECT_EQ(files->reads(), 1);
  EXPECT_EQ(files->Refresh(), second);
  EXPECT_EQ(files->reads(), 1);
}

// Kubelet's projected volumes: ca.crt -> ..data/ca.crt, and a rotation points ..data at a new directory.
TEST_F(CredentialFilesTest, ASwappedDataSymlinkIsPickedUpEvenWithTheSameSizeAndMtime) {
  ASSERT_EQ(::mkdir((dir_ + "/..2026_12_01_a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir_ + "/..2026_12_01_b").c_str(), 0755), 0);
  // The same two certificates in another order: another text of exactly the same size.
  const std::string old_pem = Certs().ca1.cert_pem + Certs().ca2.cert_pem;
  const std::string new_pem = Certs().ca2.cert_pem + Certs().ca1.cert_pem;
  ASSERT_EQ(old_pem.size(), new_pem.size());
  WriteFile(dir_ + "/..2026_12_01_a/ca.crt", old_pem);
  WriteFile(dir_ + "/..2026_12_01_b/ca.crt", new_pem);
  SetMtime(dir_ + "/..2026_12_01_a/ca.crt", 5000);
  SetMtime(dir_ + "/..2026_12_01_b/ca.crt", 5000);
  ASSERT_EQ(::symlink("..2026_12_01_a", (dir_ + "/..data").c_str()), 0);
  ASSERT_EQ(::symlink("..data/ca.crt", (dir_ + "/ca.crt").c_str()), 0);
  KubeConfig config;
  config.ca_file = dir_ + "/ca.crt";
  config.ca_pem = old_pem;
  auto files = Create(config);
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(files->Refresh()->generation, 1u);
  ASSERT_EQ(::symlink("..2026_12_01_b", (dir_ + "/..data_tmp").c_str()), 0);
  ASSERT_EQ(::rename((dir_ + "/..data_tmp").c_str(), (dir_ + "/..data").c_str()), 0);
  auto swapped = files->Refresh();
  EXPECT_EQ(files->reads(), 1) << "only the inode differs, and that is enough";
  EXPECT_EQ(swapped->generation, 2u);
  EXPECT_EQ(swapped->trust->size(), 2);
}

// A projected volume swaps every file when only the token changed: the CA is read, not parsed again.
TEST_F(CredentialFilesTest, AFileWithTheSameBytesIsReadButNotParsed) {
  const std::string ca_file = dir_ + "/ca.crt";
  auto files = Create(WithCaFile(ca_file, Certs().ca1.cert_pem));
  ASSERT_NE(files, nullptr);
  auto first = files->Current();
  SetMtime(ca_file, 777);
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(files->reads(), 1);
}

TEST_F(CredentialFilesTest, ABrokenNewFileKeepsTheLastGoodMaterialAndIsReadOnce) {
  const std::string ca_file = dir_ + "/ca.crt";
  auto files = Create(WithCaFile(ca_file, Certs().ca1.cert_pem));
  ASSERT_NE(files, nullptr);
  auto first = files->Current();
  WriteFile(ca_file, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  SetMtime(ca_file, 1000);
  EXPECT_EQ(files->Refresh(), first) << "never dropped, never the system bundle";
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(files->reads(), 1) << "a bad file is read (and logged) once per change";
  WriteFile(ca_file, Certs().ca2.cert_pem);  // repaired
  SetMtime(ca_file, 2000);
  auto repaired = files->Refresh();
  EXPECT_EQ(repaired->generation, 2u);
  EXPECT_NE(repaired->trust, first->trust);
}

TEST_F(CredentialFilesTest, AMissingOrUnreadableFileKeepsTheLastGoodMaterial) {
  const std::string ca_file = dir_ + "/ca.crt";
  auto files = Create(WithCaFile(ca_file, Certs().ca1.cert_pem));
  ASSERT_NE(files, nullptr);
  auto first = files->Current();
  ASSERT_EQ(::unlink(ca_file.c_str()), 0);
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(files->reads(), 0) << "a missing file is only stat()ed";
  WriteFile(ca_file, Certs().ca2.cert_pem);
  fail_reads_ = true;
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(files->Refresh(), first);
  EXPECT_EQ(files->reads(), 1) << "an unreadable file is tried once per change";
  fail_reads_ = false;
  SetMtime(ca_file, 3000);
  EXPECT_EQ(files->Refresh()->generation, 2u);
}

// A rotation that replaces the certificate and the key one after the other: in between, the pair does not
// match and the old pair stays; once both are new, the new pair is used.
TEST_F(CredentialFilesTest, AClientCertificateAndKeyRotateAsAPair) {
  KubeConfig config;
  config.client_cert_file = dir_ + "/client.crt";
  config.client_cert_pem = Certs().client1.cert_pem;
  config.client_key_file = dir_ + "/client.key";
  config.client_key_pem = Certs().client1.key_pem;
  WriteFile(config.client_cert_file, config.client_cert_pem);
  WriteFile(config.client_key_file, config.client_key_pem);
  auto files = Create(config);
  ASSERT_NE(files, nullptr);
  auto first = files->Current();
  EXPECT_EQ(first->trust, nullptr) << "no CA given: the system's trust store";
  EXPECT_EQ(first->identity->Subject(), "CN=node-a");
  WriteFile(config.client_cert_file, Certs().client2.cert_pem);
  SetMtime(config.client_cert_file, 100);
  EXPECT_EQ(files->Refresh(), first) << "the new certificate does not match the old key";
  WriteFile(config.client_key_file, Certs().client2.key_pem);
  SetMtime(config.client_key_file, 100);
  auto second = files->Refresh();
  EXPECT_EQ(second->generation, 2u);
  EXPECT_EQ(second->identity->Subject(), "CN=node-b");
  EXPECT_EQ(files->reads(), 2);
}

// Both in one file (client-certificate and client-key naming the same path), as kubelet's rotated pair is.
TEST_F(CredentialFilesTest, ACertificateAndKeyInOneFileRotateTogether) {
  KubeConfig config;
  config.client_cert_file = config.client_key_file = dir_ + "/client.pem";
  config.client_cert_pem = config.client_key_pem = Certs().client1.cert_pem + Certs().client1.key_pem;
  WriteFile(config.client_cert_file, config.client_cert_pem);
  auto files = Create(config);
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(files->Current()->identity->Subject(), "CN=node-a");
  WriteFile(config.client_cert_file, Certs().client2.cert_pem + Certs().client2.key_pem);
  SetMtime(config.client_cert_file, 100);
  EXPECT_EQ(files->Refresh()->identity->Subject(), "CN=node-b");
}

TEST_F(CredentialFilesTest, MaterialThatDoesNotParseAtStartIsAnError) {
  KubeConfig config = WithCaFile(dir_ + "/ca.crt", "not a certificate");
  auto files = CredentialFiles::Create(config, CountingReader());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(files.status().message().find(dir_ + "/ca.crt"), std::string::npos) << files.status();
  KubeConfig mismatch;
  mismatch.client_cert_pem = Certs().client1.cert_pem;
  mismatch.client_key_pem = Certs().client2.key_pem;
  auto pair = CredentialFiles::Create(mismatch, CountingReader());
  EXPECT_EQ(pair.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(pair.status().message().find("does not belong"), std::string::npos) << pair.status();
}

// The files are read again at start, so a rotation between loading the config and creating the client counts.
TEST_F(CredentialFilesTest, StartUsesTheFileAsItIsNow) {
  KubeConfig config = WithCaFile(dir_ + "/ca.crt", Certs().ca1.cert_pem);
  WriteFile(config.ca_file, Certs().ca1.cert_pem + Certs().ca2.cert_pem);
  auto files = Create(config);
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(files->Current()->trust->size(), 2);
  // A file gone by then: what was loaded stands, and its return is picked up.
  ASSERT_EQ(::unlink(config.ca_file.c_str()), 0);
  auto loaded = Create(config);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->Current()->trust->size(), 1);
  WriteFile(config.ca_file, Certs().ca2.cert_pem);
  EXPECT_EQ(loaded->Refresh()->generation, 2u);
}

TEST(FileIdentityTest, ComparesWhatARotationChanges) {
  std::string dir = TempDir();
  const std::string path = dir + "/f";
  EXPECT_EQ(FileIdentity::Of(path).error, ENOENT);
  EXPECT_EQ(FileIdentity::Of(path), FileIdentity::Of(path));
  WriteFile(path, "abc");
  FileIdentity a = FileIdentity::Of(path);
  EXPECT_EQ(a.error, 0);
  EXPECT_EQ(a, FileIdentity::Of(path));
  SetMtime(path, 42);
  FileIdentity b = FileIdentity::Of(path);
  EXPECT_FALSE(a == b);
  WriteFile(path, "abcd");
  SetMtime(path, 42);
  EXPECT_FALSE(b == FileIdentity::Of(path)) << "size";
}

}  // namespace
}  // namespace liken::informers
