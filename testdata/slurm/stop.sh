#!/usr/bin/env bash
# Stop the cluster that start.sh started in $WLC_SLURM_DIR (default
# /tmp/wlc-slurm): cancel its jobs, then signal only the daemons whose PIDs it
# recorded. Idempotent; exits 0 when nothing is running.
# KEEP_MUNGE=1 leaves a munged that start.sh started running.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
[ -d "$WLC_SLURM_DIR" ] || exit 0
dir=$(cd "$WLC_SLURM_DIR" && pwd)
conf=$dir/slurm.conf
export SLURM_CONF=$conf

ctld=$(pid_of "$dir/run/slurmctld.pid" slurmctld "$conf")
# 1. End jobs while slurmd is still up, so every slurmstepd can report to it
#    and exit by itself; killing slurmd first strands them.
if [ -n "$ctld" ]; then
  jobs=$(timeout 10 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  # shellcheck disable=SC2086
  [ -n "${jobs// /}" ] && timeout 10 scancel $jobs 2>/dev/null
  for _ in $(seq 1 75); do
    if [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] &&
      ! compgen -G "$dir/spool/*/*_[0-9]*" >/dev/null; then
      break
    fi
    sleep 0.2
  done
fi

# kill_wait PID...: SIGTERM, then SIGKILL whatever is still there after 5 s.
kill_wait() {
  local p alive
  [ $# -gt 0 ] || return 0
  kill "$@" 2>/dev/null
  for _ in $(seq 1 50); do
    alive=""
    for p in "$@"; do
      st=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)
      [ -n "$st" ] && [ "$st" != Z ] && alive=1
    done
    [ -z "$alive" ] && return 0
    sleep 0.1
  done
  kill -KILL "$@" 2>/dev/null
  return 0
}

# 2. The daemons, by recorded PID (checked against name and config path).
pids=()
while read -r n; do
  [ -n "$n" ] || continue
  p=$(pid_of "$dir/run/slurmd-$n.pid" slurmd "$conf") && pids+=("$p")
done < <(node_names)
[ -n "$ctld" ] && pids+=("$ctld")
kill_wait "${pids[@]}"

# 3. A slurmstepd stranded by a dead slurmd ignores SIGTERM. It is ours if it
#    holds a unix socket under our spool directory (its step socket).
inodes=$(awk -v d="$dir/spool/" 'index($8, d) == 1 {print $7}' /proc/net/unix 2>/dev/null | sort -u)
if [ -n "$inodes" ]; then
  strays=()
  for p in $(pgrep -x slurmstepd); do
    for fd in /proc/"$p"/fd/*; do
      l=$(readlink "$fd" 2>/dev/null) || continue
      case $l in socket:\[*\])
        i=${l#socket:[}; i=${i%]}
        if grep -qx "$i" <<<"$inodes"; then strays+=("$p"); break; fi ;;
      esac
    done
  done
  [ ${#strays[@]} -gt 0 ] && kill -KILL "${strays[@]}" 2>/dev/null
fi
rm -f "$dir"/spool/*/*_[0-9]* 2>/dev/null

# 4. munged, only when start.sh started it.
if [ -z "${KEEP_MUNGE:-}" ]; then
  m=$(pid_of "$dir/run/munged.pid" munged) && kill_wait "$m"
  rm -f "$dir/run/munged.pid"
fi
rm -f "$dir"/run/slurm*.pid
exit 0
