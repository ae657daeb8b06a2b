#!/usr/bin/env bash
# `liken-dra runtime-check` against a real containerd (the v2 that hack/build-control-plane.sh caches for the node
# tier), private to this test: its own root, state, sockets and config, NRI off, so nothing of the host's or the node
# tier's runtime is touched. Its CRI configuration turns CDI on with cdi_spec_dirs = [<tmp>/cdi-a]:
#   --cdi-root <tmp>/cdi-b (not among them)  -> "CDI outside_spec_dirs", exit 1
#   --cdi-root <tmp>/cdi-a                   -> "CDI enabled", exit 0
# and with the default directories (no cdi_spec_dirs): --cdi-root /var/run/cdi -> enabled, --cdi-root <tmp>/cdi-b
# -> outside_spec_dirs. Exit 77 (skipped) without root or the cached containerd.
#   runtime_check_containerd_test.sh LIKEN_DRA
set -euo pipefail
bin=${1:?usage: runtime_check_containerd_test.sh LIKEN_DRA}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
ctrd_dir=
for d in $(ls -d "$HOME"/.cache/liken-dra/k8s-*/bin 2>/dev/null | sort -r); do
  [ -x "$d/containerd" ] && { ctrd_dir=$d; break; }
done
[ -n "$ctrd_dir" ] || { echo "SKIP: no containerd in ~/.cache/liken-dra/k8s-*/bin (hack/build-control-plane.sh)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/liken-rtcheck.XXXXXX")
daemon=
cleanup() {
  if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
    kill "$daemon"
    wait "$daemon" 2>/dev/null || true
  fi
  umount -R "$tmp/state" "$tmp/root" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
check() { # NAME WANT_EXIT WANT_TEXT OUTPUT EXIT
  if [ "$5" = "$2" ] && [[ "$4" == *"$3"* ]]; then
    echo "ok   $1: exit $5: $4"
  else
    echo "FAIL $1: exit $5 (want $2), output: $4 (want: $3)"
    failed=1
  fi
}

# start_containerd CONFIG_EXTRA: a fresh containerd whose CRI runtime plugin section holds CONFIG_EXTRA.
start_containerd() {
  rm -rf "$tmp/root" "$tmp/state"
  cat >"$tmp/config.toml" <<TOML
version = 3
root = "$tmp/root"
state = "$tmp/state"
disabled_plugins = ["io.containerd.nri.v1.nri"]
[grpc]
  address = "$tmp/containerd.sock"
[ttrpc]
  address = "$tmp/containerd.sock.ttrpc"
[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true
$1
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML
  PATH="$ctrd_dir:$PATH" "$ctrd_dir/containerd" --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 &
  daemon=$!
  for _ in $(seq 600); do # up to a minute for the CRI service: a bound on a hang, not a speed check
    "$bin" runtime-check --runtime-endpoint "unix://$tmp/containerd.sock" >/dev/null 2>&1 && return 0
    [ $? = 3 ] || return 0 # answered (exit 1 is an answer too)
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL containerd did not answer: $(tail -n 5 "$tmp/containerd.log" | paste -sd'|')"
  exit 1
}
stop_containerd() { kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=; }

mkdir -p "$tmp/cdi-a" "$tmp/cdi-b"
start_containerd "  cdi_spec_dirs = [\"$tmp/cdi-a\"]"
echo "containerd: $("$ctrd_dir/containerd" --version)"
set +e
out=$("$bin" runtime-check --runtime-endpoint "unix://$tmp/containerd.sock" --cdi-root "$tmp/cdi-b" 2>&1); rc=$?
check "cdi_spec_dirs omit --cdi-root" 1 "CDI outside_spec_dirs: containerd" "$out" $rc
[[ "$out" == *"reads CDI specs from $tmp/cdi-a, not from the driver's --cdi-root $tmp/cdi-b"* ]] ||
  { echo "FAIL the line names neither directory: $out"; failed=1; }
out=$("$bin" runtime-check --runtime-endpoint "unix://$tmp/containerd.sock" --cdi-root "$tmp/cdi-a" 2>&1); rc=$?
check "cdi_spec_dirs hold --cdi-root" 0 "CDI enabled: containerd" "$out" $rc
set -e
stop_containerd
start_containerd ""
set +e
out=$("$bin" runtime-check --runtime-endpoint "unix://$tmp/containerd.sock" 2>&1); rc=$?
check "default cdi_spec_dirs, default --cdi-root /var/run/cdi" 0 "CDI enabled: containerd" "$out" $rc
out=$("$bin" runtime-check --runtime-endpoint "unix://$tmp/containerd.sock" --cdi-root "$tmp/cdi-b" 2>&1); rc=$?
check "default cdi_spec_dirs omit --cdi-root" 1 "CDI outside_spec_dirs: containerd" "$out" $rc
set -e
stop_containerd
exit $failed
