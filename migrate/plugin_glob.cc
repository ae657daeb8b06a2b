#include "migrate/plugin_glob.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace liken::migrate {
namespace {

constexpr char32_t kRuneError = 0xFFFD;

// Go's utf8.DecodeRuneInString: the rune at the start of `s` and its length; (kRuneError, 1) for a byte that starts
// no valid encoding, (kRuneError, 0) for an empty `s`.
std::pair<char32_t, size_t> DecodeRune(std::string_view s) {
  if (s.empty()) return {kRuneError, 0};
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return {b0, 1};
  size_t n = 0;
  char32_t r = 0, min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, r = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, r = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, r = b0 & 0x07, min = 0x10000;
  } else {
    return {kRuneError, 1};
  }
  if (s.size() < n) return {kRuneError, 1};
  for (size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return {kRuneError, 1};
    r = (r << 6) | (b & 0x3F);
  }
  if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return {kRuneError, 1};
  return {r, n};
}

absl::Status BadPattern() { return absl::InvalidArgumentError("syntax error in pattern"); }

// Go's getEsc: one possibly escaped rune of a class; the chunk after it must not be empty.
absl::StatusOr<char32_t> GetEsc(std::string_view* chunk) {
  if (chunk->empty() || (*chunk)[0] == '-' || (*chunk)[0] == ']') return BadPattern();
  if ((*chunk)[0] == '\\') {
    chunk->remove_prefix(1);
    if (chunk->empty()) return BadPattern();
  }
  auto [r, n] = DecodeRune(*chunk);
  if (r == kRuneError && n == 1) return BadPattern();
  chunk->remove_prefix(n);
  if (chunk->empty()) return BadPattern();
  return r;
}

// Go's scanChunk: leading stars, then the pattern up to the next star outside a class.
void ScanChunk(std::string_view* pattern, bool* star, std::string_view* chunk) {
  *star = false;
  while (!pattern->empty() && (*pattern)[0] == '*') {
    pattern->remove_prefix(1);
    *star = true;
  }
  bool in_range = false;
  size_t i = 0;
  for (; i < pattern->size(); ++i) {
    const char c = (*pattern)[i];
    if (c == '\\') {
      if (i + 1 < pattern->size()) ++i;
    } else if (c == '[') {
      in_range = true;
    } else if (c == ']') {
      in_range = false;
    } else if (c == '*' && !in_range) {
      break;
    }
  }
  *chunk = pattern->substr(0, i);
  pattern->remove_prefix(i);
}

// Go's matchChunk: whether `chunk` matches a prefix of `s` (the rest in *rest); the whole chunk is checked for
// syntax even after the match failed.
absl::StatusOr<bool> MatchChunk(std::string_view chunk, std::string_view s, std::string_view* rest) {
  bool failed = false;
  while (!chunk.empty()) {
    if (!failed && s.empty()) failed = true;
    switch (chunk[0]) {
      case '[': {
        char32_t r = 0;
        if (!failed) {
          auto [rune, n] = DecodeRune(s);
          r = rune;
          s.remove_prefix(n);
        }
        chunk.remove_prefix(1);
        bool negated = false;
        if (!chunk.empty() && chunk[0] == '^') {
          negated = true;
          chunk.remove_prefix(1);
        }
        bool match = false;
        int ranges = 0;
        while (true) {
          if (!chunk.empty() && chunk[0] == ']' && ranges > 0) {
            chunk.remove_prefix(1);
            break;
          }
          auto lo = GetEsc(&chunk);
          if (!lo.ok()) return lo.status();
          char32_t hi = *lo;
          if (chunk[0] == '-') {
            chunk.remove_prefix(1);
            auto h = GetEsc(&chunk);
            if (!h.ok()) return h.status();
            hi = *h;
          }
          if (*lo <= r && r <= hi) match = true;
          ++ranges;
        }
        if (match == negated) failed = true;
        break;
      }
      case '?':
        if (!failed) {
          if (s[0] == '/') failed = true;
          s.remove_prefix(DecodeRune(s).second);
        }
        chunk.remove_prefix(1);
        break;
      case '\\':
        chunk.remove_prefix(1);
        if (chunk.empty()) return BadPattern();
        [[fallthrough]];
      default:
        if (!failed) {
          if (chunk[0] != s[0]) failed = true;
          s.remove_prefix(1);
        }
        chunk.remove_prefix(1);
        break;
    }
  }
  if (failed) return false;
  *rest = s;
  return true;
}

// The '/'-separated parts of `path`, empty ones included.
std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

std::vector<std::string_view> Levels(std::string_view absolute) { return Split(absolute.substr(1)); }

}  // namespace

absl::StatusOr<bool> GoPathMatch(std::string_view pattern, std::string_view name) {
  while (!pattern.empty()) {
    bool star = false;
    std::string_view chunk;
    ScanChunk(&pattern, &star, &chunk);
    if (star && chunk.empty()) return name.find('/') == std::string_view::npos;  // a trailing star
    std::string_view t;
    auto ok = MatchChunk(chunk, name, &t);
    if (ok.ok() && *ok && (t.empty() || !pattern.empty())) {
      name = t;
      continue;
    }
    if (!ok.ok()) return ok.status();
    bool matched_after_skip = false;
    if (star) {
      for (size_t i = 0; i < name.size() && name[i] != '/'; ++i) {
        auto skipped = MatchChunk(chunk, name.substr(i + 1), &t);
        if (skipped.ok() && *skipped) {
          if (pattern.empty() && !t.empty()) continue;
          name = t;
          matched_after_skip = true;
          break;
        }
        if (!skipped.ok()) return skipped.status();
      }
    }
    if (matched_after_skip) continue;
    // No match: the rest of the pattern must still be well formed.
    while (!pattern.empty()) {
      ScanChunk(&pattern, &star, &chunk);
      std::string_view unused;
      if (auto check = MatchChunk(chunk, "", &unused); !check.ok()) return check.status();
    }
    return false;
  }
  return name.empty();
}

std::string GoPathClean(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path[0] == '/';
  std::vector<std::string_view> kept;
  for (std::string_view part : Split(path)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!kept.empty() && kept.back() != "..") {
        kept.pop_back();
      } else if (!rooted) {
        kept.push_back(part);
      }
      continue;
    }
    kept.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i > 0) out += '/';
    out += kept[i];
  }
  return out.empty() ? "." : out;
}

absl::StatusOr<std::string> PluginGlobPattern(std::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("Rel: can't make ", std::string(path), " relative to /"));
  }
  std::string clean = GoPathClean(path);
  // fs.Glob checks the whole (relative) pattern first.
  std::string_view relative = clean == "/" ? std::string_view(".") : std::string_view(clean).substr(1);
  if (auto valid = GoPathMatch(relative, ""); !valid.ok()) return valid.status();
  return clean;
}

bool PluginGlobFinds(std::string_view pattern, std::string_view path) {
  if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') return false;
  if (pattern == "/" || path == "/") return pattern == path;
  const auto want = Levels(pattern), have = Levels(path);
  if (want.size() != have.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    auto m = GoPathMatch(want[i], have[i]);
    if (!m.ok() || !*m) return false;
  }
  return true;
}

bool PluginGlobHasMeta(std::string_view pattern) { return pattern.find_first_of("*?[\\") != std::string_view::npos; }

}  // namespace liken::migrate
