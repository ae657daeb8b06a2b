// Runs a libFuzzer target over files and directories of inputs, for compilers without -fsanitize=fuzzer.
// Exit 0 when every input ran; a crash is the failure.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int RunFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  std::string data = buf.str();
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return 1;
}

int RunPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay: cannot stat %s\n", path.c_str());
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return RunFile(path);
  int count = 0;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return -1;
  std::vector<std::string> names;
  while (auto* e = ::readdir(dir)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(path + "/" + n);
  }
  ::closedir(dir);
  for (const auto& n : names) {
    int r = RunPath(n);
    if (r < 0) return r;
    count += r;
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  int total = 0;
  for (int i = 1; i < argc; ++i) {
    int r = RunPath(argv[i]);
    if (r < 0) return 1;
    total += r;
  }
  // Also a few built-in edge cases: empty, one selector byte each, binary junk.
  const std::string edge[] = {"", std::string(1, '\0'), "\x01", "\x02\x01", "\x03", std::string("\x00=\n=\xff", 5)};
  for (const auto& e : edge) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(e.data()), e.size());
    ++total;
  }
  std::printf("replayed %d inputs\n", total);
  return total > 0 ? 0 : 1;
}
