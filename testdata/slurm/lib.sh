# shellcheck shell=bash
# Shared by start.sh and stop.sh (sourced, not run).

WLC_SLURM_DIR=${WLC_SLURM_DIR:-/tmp/wlc-slurm}

# pid_of FILE COMM [CMDLINE_WORD] prints the PID recorded in FILE when that
# process is still alive, is named COMM and (if given) has CMDLINE_WORD in its
# command line. A stale pid file must never make us signal a recycled PID that
# now belongs to someone else's process.
pid_of() {
  local file=$1 comm=$2 word=${3:-} pid state
  [ -s "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [ -n "$state" ] && [ "$state" != Z ] || return 1
  if [ -n "$word" ]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$word" || return 1
  fi
  echo "$pid"
}

# node_names prints the slurmd node names recorded by start.sh.
node_names() {
  [ -s "$WLC_SLURM_DIR/nodes" ] && cat "$WLC_SLURM_DIR/nodes"
}
