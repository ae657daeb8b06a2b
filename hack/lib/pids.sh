# Sourced by hack/local-cluster.sh and hack/local-node.sh: the PID files of the daemons they start.
# The caller sets PIDS (the folder of <name>.pid files).

# True when the PID recorded for a daemon is alive and is still that daemon's binary (not a reused PID).
pid_alive() {
  local f="$PIDS/$1.pid" pid exe
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  [ "$(basename "${exe% (deleted)}")" = "$1" ]
}
