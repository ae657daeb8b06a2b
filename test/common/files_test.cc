// Regular-file reads: a FIFO, socket, device or directory is refused at once, never waited on.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/atomic_file.h"
#include "common/files.h"

namespace liken {
namespace {

class RegularFileTest : public ::testing::Test {
 protected:
  RegularFileTest() {
    // A watchdog, not a timed assertion: a read that blocks on a FIFO would hang this process forever.
    ::alarm(120);
    char tmpl[] = "/tmp/liken-files-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~RegularFileTest() override {
    ::alarm(0);
    std::system(("rm -rf " + dir_).c_str());
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& text) { std::ofstream(Path(name)) << text; }
  std::string dir_;
};

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TEST_F(RegularFileTest, MakeDirectoriesCreatesMissingParentsAndAcceptsWhatExists) {
  ASSERT_TRUE(MakeDirectories(Path("a/b/c")).ok());
  EXPECT_TRUE(IsDirectory(Path("a/b/c")));
  EXPECT_TRUE(MakeDirectories(Path("a/b/c")).ok());   // already there
  EXPECT_TRUE(MakeDirectories(Path("a/b/d/")).ok());  // a trailing slash
  EXPECT_TRUE(IsDirectory(Path("a/b/d")));
  EXPECT_TRUE(MakeDirectories(Path("a//e")).ok());  // a doubled slash
  EXPECT_TRUE(IsDirectory(Path("a/e")));
  ASSERT_EQ(::symlink("a/b", Path("link").c_str()), 0);
  EXPECT_TRUE(MakeDirectories(Path("link")).ok());  // a symlink to a directory is one
  EXPECT_TRUE(MakeDirectories(Path("link/f")).ok());
  EXPECT_TRUE(IsDirectory(Path("a/b/f")));
}

TEST_F(RegularFileTest, MakeDirectoriesRefusesAFileInTheWay) {
  Write("file", "x");
  absl::Status leaf = MakeDirectories(Path("file"));
  EXPECT_EQ(leaf.code(), absl::StatusCode::kFailedPrecondition) << leaf;
  absl::Status parent = MakeDirectories(Path("file/sub/dir"));
  EXPECT_FALSE(parent.ok());
  EXPECT_NE(std::string(parent.message()).find("file"), std::string::npos) << parent;
  ASSERT_EQ(::symlink("missing", Path("dangling").c_str()), 0);
  EXPECT_FALSE(MakeDirectories(Path("dangling/sub")).ok());
  EXPECT_EQ(MakeDirectories("").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RegularFileTest, ReadsARegularFileAndThroughASymlinkWhenFollowing) {
  Write("a", "hello\n");
  ASSERT_EQ(::symlink("a", Path("link").c_str()), 0);
  EXPECT_EQ(ReadRegularFile(Path("a")).value_or("<error>"), "hello\n");
  EXPECT_EQ(ReadFileToString(Path("link")).value_or("<error>"), "hello\n");
  EXPECT_EQ(ReadAttribute(Path("a")).value_or("<error>"), "hello");
}

TEST_F(RegularFileTest, RefusesAFinalSymlinkWhenAskedTo) {
  Write("a", "hello\n");
  ASSERT_EQ(::symlink("a", Path("link").c_str()), 0);
  auto text = ReadRegularFile(Path("link"), 1024, FinalSymlink::kRefuse);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(text.status().message().find("symlink"), std::string::npos) << text.status();
}

TEST_F(RegularFileTest, RefusesAFifoAtOnceWithoutAWriter) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0644), 0);
  auto text = ReadFileToString(Path("fifo"));
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(text.status().message().find("is a FIFO, not a regular file"), std::string::npos) << text.status();
  EXPECT_NE(text.status().message().find(Path("fifo")), std::string::npos) << "the error names the path";
  EXPECT_EQ(ReadAttribute(Path("fifo")).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(OpenRegularFile(Path("fifo"), FinalSymlink::kFollow, FileAccess::kWrite).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(RegularFileTest, RefusesASymlinkToAFifo) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("fifo", Path("link").c_str()), 0);
  EXPECT_EQ(ReadFileToString(Path("link")).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(RegularFileTest, RefusesASocketADeviceAndADirectory) {
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock = Path("sock");
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto from_socket = ReadFileToString(sock);
  ::close(s);
  EXPECT_EQ(from_socket.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(from_socket.status().message().find("a socket"), std::string::npos) << from_socket.status();

  auto from_device = ReadFileToString("/dev/null");
  EXPECT_EQ(from_device.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(from_device.status().message().find("a character device"), std::string::npos) << from_device.status();

  auto from_dir = ReadFileToString(dir_);
  EXPECT_EQ(from_dir.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(RegularFileTest, ReadsProcFiles) {
  auto self = ReadFileToString("/proc/self/status");
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_NE(self->find("Name:"), std::string::npos);
}

TEST_F(RegularFileTest, AbsentIsNotFoundAndTooLargeIsOutOfRange) {
  EXPECT_EQ(ReadFileToString(Path("missing")).status().code(), absl::StatusCode::kNotFound);
  Write("big", std::string(100, 'x'));
  EXPECT_EQ(ReadRegularFile(Path("big"), 10).status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(RegularFileTest, RemovesOnlyLeftoverTempFilesOfMatchingTargets) {
  Write(".a.json.tmp.1.ff", "half");
  Write(".a.json.tmp.7.0a", "half");
  Write(".b.json.tmp.1.ff", "other claim");
  Write("a.json", "record");
  Write(".hidden", "not a temp file");
  auto removed = RemoveLeftoverTempFiles(dir_, [](absl::string_view target) { return target == "a.json"; });
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 2);
  EXPECT_EQ(::access(Path(".b.json.tmp.1.ff").c_str(), F_OK), 0);
  EXPECT_EQ(::access(Path("a.json").c_str(), F_OK), 0);
  EXPECT_EQ(::access(Path(".hidden").c_str(), F_OK), 0);
  EXPECT_EQ(*RemoveLeftoverTempFiles(dir_, [](absl::string_view) { return true; }), 1);
  EXPECT_EQ(*RemoveLeftoverTempFiles(Path("absent"), [](absl::string_view) { return true; }), 0);
}

}  // namespace
}  // namespace liken
