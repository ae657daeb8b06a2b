# shellcheck shell=bash
# Shell code shared by the benchmarks on a local control plane: test/controller/daemon_rss_benchmark.sh,
# test/controller/scale_benchmark.sh and test/kubelet/cluster_prepare_benchmark.sh. Sourced, never run.
#
# The caller defines log (one line to stderr, with its own prefix) and, after `hack/local-cluster.sh up`, has
# KUBECONFIG (the admin's) and LIKEN_APISERVER_PORT exported. WAIT_POLL_SECONDS sets wait_until's poll (0.2).

# stop_groups PGID...: TERMs every process group, waits up to 10 s for each leader to exit, then KILLs the group.
stop_groups() {
  local g
  for g in "$@"; do kill -TERM -- "-$g" 2>/dev/null || true; done
  for g in "$@"; do
    for _ in $(seq 50); do kill -0 "$g" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$g" 2>/dev/null || true
  done
}

# finish_work REPO WORK: brings the control plane down and removes WORK (unmounting it first when it is a
# make_tmpfs_dir), or keeps it when LIKEN_BENCH_KEEP=1.
finish_work() {
  "$1/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  # A second try: a driver still writing while its group shuts down can make the first one find a directory
  # that is not empty.
  if [ "${LIKEN_BENCH_KEEP:-0}" = 1 ]; then
    log "work directory kept: $2"
  else
    release_tmpfs_dir "$2" 2>/dev/null || { sleep 1; release_tmpfs_dir "$2"; }
  fi
}

# wait_until SECONDS COMMAND...: polls every WAIT_POLL_SECONDS until COMMAND succeeds; false on timeout.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep "${WAIT_POLL_SECONDS:-0.2}"
  done
}

# api_setup DIR: writes the admin's CA, certificate and key from $KUBECONFIG to DIR/pki; sets API and CURL_ARGS.
api_setup() {
  mkdir -p "$1/pki"
  grep 'certificate-authority-data:' "$KUBECONFIG" | awk '{print $2}' | base64 -d >"$1/pki/ca.crt"
  grep 'client-certificate-data:' "$KUBECONFIG" | awk '{print $2}' | base64 -d >"$1/pki/admin.crt"
  grep 'client-key-data:' "$KUBECONFIG" | awk '{print $2}' | base64 -d >"$1/pki/admin.key"
  API="https://127.0.0.1:$LIKEN_APISERVER_PORT"
  CURL_ARGS=(--silent --show-error --fail --cacert "$1/pki/ca.crt" --cert "$1/pki/admin.crt" --key "$1/pki/admin.key")
}

# api_curl CURL-ARGS...: curl as the admin (after api_setup); fails on an HTTP error.
api_curl() { curl "${CURL_ARGS[@]}" "$@"; }

# api_metrics: the API server's /metrics text.
api_metrics() { api_curl "$API/metrics"; }

# request_counts: one scrape of the API server's counters as sorted "key value" lines: "all" (apiserver_request_total,
# WATCH excluded), "verb:resource" for the kinds a driver reads or writes (nodes, resourceslices, pods,
# resourceclaims; subresources excluded) and "open-watches" (apiserver_longrunning_requests of WATCH).
request_counts() {
  api_metrics | awk '
    /^apiserver_request_total\{/ {
      verb = $0; sub(/.*verb="/, "", verb); sub(/".*/, "", verb)
      res = $0; sub(/.*[{,]resource="/, "", res); sub(/".*/, "", res)
      if (verb != "WATCH") c["all"] += $NF
      if ($0 !~ /subresource="[^"]/ && (res == "nodes" || res == "resourceslices" || res == "pods" || res == "resourceclaims"))
        c[verb ":" res] += $NF
    }
    /^apiserver_longrunning_requests\{/ && /verb="WATCH"/ { c["open-watches"] += $NF }
    END { for (k in c) printf "%s %d\n", k, c[k] }' | sort
}

# api_requests: requests for resources the API server answered (apiserver_request_total, all clients; watches and
# non-resource requests such as GET /metrics excluded), one number.
api_requests() {
  api_metrics |
    awk '/^apiserver_request_total\{/ && $0 !~ /verb="WATCH"/ && $0 !~ /[{,]resource=""/ { s += $NF } END { printf "%d\n", s }'
}

# claim_gets: the same for GETs of resourceclaims (no subresource) only, one number.
claim_gets() {
  api_metrics |
    awk '/^apiserver_request_total\{/ && /resource="resourceclaims"/ && /verb="GET"/ && $0 !~ /subresource="[a-z]/ { s += $NF } END { printf "%d\n", s }'
}

# status_kb PID FIELD: the value (kB, or a count) of FIELD in /proc/PID/status, e.g. VmRSS, Threads.
status_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# cpu_ticks PID: utime + stime of PID in clock ticks (from /proc/PID/stat; no spaces in the comm field).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# pid_of GROUP_PID EXE_NAME: the group's process itself, or its child (umockdev-run's), running EXE_NAME.
pid_of() {
  local p
  for p in "$1" $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
    [ "$(basename "$(readlink "/proc/$p/exe")")" = "$2" ] && { echo "$p"; return 0; }
  done
  return 1
}
# cpu_ns PID: on-CPU nanoseconds of PID's live threads (schedstat), finer than clock ticks for an idle window.
cpu_ns() { awk '{ s += $1 } END { printf "%.0f\n", s }' /proc/"$1"/task/*/schedstat; }  # %.0f: mawk's %d stops at 2^31
# mb KB: "12.3 MB"
mb() { awk -v kb="$1" 'BEGIN { printf "%.1f MB", kb / 1024 }'; }

# DIR: the type of DIR's filesystem, and for ext4 whether it has a journal ("ext4 (no journal)"). Without a
# journal, ext4 reads the inode table to skip recently deleted inodes at each new file, which makes file
# creation far slower than on the journaled ext4 a node's disk normally has.
fs_of() {
  local type dev
  type=$(df -T "$1" | awk 'NR == 2 { print $2 }')
  if [ "$type" = ext4 ]; then
    dev=$(basename "$(findmnt -n -o SOURCE -T "$1")")
    case "$(cat "/sys/fs/ext4/$dev/journal_task" 2>/dev/null)" in
      "") ;;
      "<none>") type="ext4 (no journal)" ;;
      *) type="ext4 (journaled)" ;;
    esac
  fi
  echo "$type"
}

# Prints a new directory on a tmpfs outside /dev, for the roots a node keeps on tmpfs (/var/run): a private tmpfs
# mounted on a directory under /tmp, or, where mounting is not permitted, a directory under /dev/shm (and a
# warning). Not /dev/shm first: a driver run under umockdev-run has every path under /dev taken for a device node
# (each open there connects to umockdev's ioctl socket and probes several paths), a cost no node has.
# Remove it with release_tmpfs_dir.
make_tmpfs_dir() {
  local dir
  dir=$(mktemp -d /tmp/liken-bench-tmpfs.XXXXXX)
  if mount -t tmpfs -o size=1g,mode=0755 liken-bench "$dir" 2>/dev/null; then
    echo "$dir"
    return
  fi
  rmdir "$dir"
  echo "bench: cannot mount a tmpfs; using /dev/shm, where umockdev's preload slows every file operation" >&2
  mktemp -d /dev/shm/liken-bench-tmpfs.XXXXXX
}

# DIR: unmounts DIR when make_tmpfs_dir mounted it, and removes it.
release_tmpfs_dir() {
  if mountpoint -q "$1"; then umount "$1" || umount -l "$1"; fi
  rm -rf "$1"
}
