#!/usr/bin/env bash
# The plugin's own matching on testdata/plugin_glob_cases.tsv: builds test/migrate/plugin_glob_check/main.go inside
# squat/generic-device-plugin's source tree (the tarball in ../shared/peers, or LIKEN_GDP_TARBALL), with no network
# (GOPROXY=off: the checker imports the plugin's absolute package and the standard library only), and runs it. The
# same cases are liken-dra's unit test (PluginGlob.CasesAsThePluginMatches), so a case that passes both is matched
# alike. Exit 77 (skipped) without go or the tarball.
#   plugin_glob_check.sh CASES.tsv
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
cases=${1:?usage: plugin_glob_check.sh CASES.tsv}
command -v go >/dev/null || { echo "skipped: go is not installed"; exit 77; }
tarball=${LIKEN_GDP_TARBALL:-}
if [ -z "$tarball" ]; then
  for d in "$REPO/../shared/peers" "$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../../shared/peers"; do
    f=$(ls -t "$d"/generic-device-plugin-*.tar.gz 2>/dev/null | head -n 1 || true)
    [ -n "$f" ] && { tarball=$f; break; }
  done
fi
[ -n "$tarball" ] && [ -f "$tarball" ] || { echo "skipped: no generic-device-plugin tarball (set LIKEN_GDP_TARBALL)"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/liken-glob-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
tar -xzf "$tarball" -C "$WORK"
mkdir -p "$WORK/cmd/liken-plugin-glob-check"
cp "$HERE/plugin_glob_check/main.go" "$WORK/cmd/liken-plugin-glob-check/"
echo "the plugin: $(basename "$tarball")"
(cd "$WORK" && GOTOOLCHAIN=local GOPROXY=off GOFLAGS="-mod=mod -buildvcs=false" \
   go build -o "$WORK/plugin_glob_check" ./cmd/liken-plugin-glob-check)
"$WORK/plugin_glob_check" "$cases"
