// How squat/generic-device-plugin finds the files a group's path names: the pattern made relative to "/" with Go's
// filepath.Rel (which cleans it: "/dev/snd/" and "/dev//snd" are "/dev/snd"), then io/fs.Glob, which matches each
// name of each directory level with Go's path.Match. Written after Go's documented semantics, not fnmatch(3)'s:
// "[^...]" negates a class, "!" is an ordinary character, "\" escapes the next one, and a malformed pattern ("[",
// "[]a]", "[a-]", a trailing "\") is an error, also where the name would not match anyway.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace liken::migrate {

// Go's path.Match(pattern, name): whether all of `name` matches `pattern` ('*' and '?' never match '/'; classes
// and '?' read UTF-8 runes). InvalidArgument (Go's ErrBadPattern) for a malformed pattern, whatever `name` is.
// Thread-safe.
absl::StatusOr<bool> GoPathMatch(std::string_view pattern, std::string_view name);

// Go's path.Clean: the shortest equivalent path ("//" and "/./" made "/", "x/.." removed, no trailing '/', ".."
// above the root dropped; "" is "."). Thread-safe.
std::string GoPathClean(std::string_view path);

// The pattern the plugin globs for `path`, as an absolute path: GoPathClean(path). InvalidArgument when `path` is
// not absolute (filepath.Rel fails; the plugin stops discovering) or is malformed (fs.Glob's ErrBadPattern).
// Thread-safe.
absl::StatusOr<std::string> PluginGlobPattern(std::string_view path);

// Whether fs.Glob with `pattern` (a PluginGlobPattern result) finds the absolute, clean `path`, given that `path`
// exists: the same number of levels, each name matched by its level of the pattern. Thread-safe.
bool PluginGlobFinds(std::string_view pattern, std::string_view path);

// Whether fs.Glob reads `pattern` as a pattern rather than one path to look up (Go's hasMeta: any of `*?[\`).
// Thread-safe.
bool PluginGlobHasMeta(std::string_view pattern);

}  // namespace liken::migrate
