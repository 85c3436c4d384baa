#!/usr/bin/env bash
# Start a throw-away Slurm cluster on this machine: one slurmctld and one
# slurmd per node (`slurmd -N nX`), WLC_SLURM_GPUS fake GPUs per node, and the
# fakepyxis SPANK plugin. Needs root and:
#   apt-get install -y slurmctld slurmd slurm-client munge libslurm-dev gcc
#
# Knobs (environment):
#   WLC_SLURM_DIR    state, logs, config      (default /tmp/wlc-slurm)
#   WLC_SLURM_PORT   slurmctld port; slurmd of node i listens on PORT+i (6817)
#   WLC_SLURM_NODES  number of nodes n1..nN   (2)
#   WLC_SLURM_GPUS   fake GPUs per node       (4)
#   WLC_SLURM_CPUS   CPUs per node (fiction)  (8)
#   WLC_SLURM_MEM    MB per node (fiction)    (16000)
#
# Progress goes to stderr; stdout is only `export ...` lines, so
#   eval "$(testdata/slurm/start.sh)"
# sets SLURM_CONF, WLC_SLURM_CONF and WLC_SLURM_DIR. Running it again while
# the same cluster is healthy is a no-op; otherwise it stops what the last run
# left and starts afresh. testdata/slurm/stop.sh undoes it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
port=${WLC_SLURM_PORT:-6817}
nnodes=${WLC_SLURM_NODES:-2}
gpus=${WLC_SLURM_GPUS:-4}
cpus=${WLC_SLURM_CPUS:-8}
mem=${WLC_SLURM_MEM:-16000}

log() { echo "slurm start.sh: $*" >&2; }
die() { log "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (slurmd needs it to launch jobs)"
for tool in slurmctld slurmd sinfo scontrol munge gcc; do
  command -v "$tool" >/dev/null ||
    die "$tool not found; install with: apt-get install -y slurmctld slurmd slurm-client munge libslurm-dev gcc (or source .ci/setup.d/30-slurm.sh)"
done
[ -f /usr/include/slurm/spank.h ] ||
  die "/usr/include/slurm/spank.h not found (needed to build fakepyxis); install with: apt-get install -y libslurm-dev"

mkdir -p "$WLC_SLURM_DIR"
dir=$(cd "$WLC_SLURM_DIR" && pwd)
export WLC_SLURM_DIR=$dir
conf=$dir/slurm.conf
host=$(hostname -s)

print_exports() {
  printf 'export SLURM_CONF=%q\nexport WLC_SLURM_CONF=%q\nexport WLC_SLURM_DIR=%q\n' "$conf" "$conf" "$dir"
}

# Render into *.new first so a healthy cluster started from the same
# configuration can be reused instead of restarted.
nodes=()
for i in $(seq 1 "$nnodes"); do nodes+=("n$i"); done
{
  sed -e "s|@DIR@|$dir|g" -e "s|@HOST@|$host|g" -e "s|@PORT@|$port|g" "$here/slurm.conf.in"
  for i in $(seq 1 "$nnodes"); do
    gres=""; [ "$gpus" -gt 0 ] && gres=" Gres=gpu:$gpus"
    echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + i)) CPUs=$cpus RealMemory=$mem$gres State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >"$conf.new"
{
  echo "# gres/gpu drops File-less GPUs and rejects regular files, hence mknod'ed character devices."
  if [ "$gpus" -gt 0 ]; then
    for n in "${nodes[@]}"; do
      echo "NodeName=$n Name=gpu File=$dir/dev/$n/nvidia[0-$((gpus - 1))]"
    done
  fi
} >"$dir/gres.conf.new"

healthy() {
  local n idle
  pid_of "$dir/run/slurmctld.pid" slurmctld "$conf" >/dev/null || return 1
  for n in "${nodes[@]}"; do
    pid_of "$dir/run/slurmd-$n.pid" slurmd "$conf" >/dev/null || return 1
  done
  idle=$(SLURM_CONF=$conf timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null |
    awk '$2 ~ /^(idle|mixed|allocated|completing)$/ {print $1}' | sort -u | wc -l)
  [ "$idle" = "$nnodes" ]
}

if cmp -s "$conf.new" "$conf" && cmp -s "$dir/gres.conf.new" "$dir/gres.conf" &&
  [ "$dir/fakepyxis.so" -nt "$here/fakepyxis.c" ] && healthy; then
  rm -f "$conf.new" "$dir/gres.conf.new"
  log "cluster in $dir is already running; reusing it"
  print_exports
  exit 0
fi

# Whatever a previous run left (crashed daemons, stale pid files) goes first.
# Its munged, if any and still alive, is kept and stays recorded as ours.
KEEP_MUNGE=1 bash "$here/stop.sh" >&2 || true

mkdir -p "$dir"/{state,run,log,dev}
mv "$conf.new" "$conf"
mv "$dir/gres.conf.new" "$dir/gres.conf"
printf '%s\n' "${nodes[@]}" >"$dir/nodes"
for n in "${nodes[@]}"; do
  mkdir -p "$dir/spool/$n" "$dir/dev/$n" "$dir/tmp/$n"
  for g in $(seq 0 $((gpus - 1))); do
    # Major 195 is the NVIDIA driver's; the device is never opened because
    # task/none confines nothing, so no driver is needed.
    [ -c "$dir/dev/$n/nvidia$g" ] || { rm -f "$dir/dev/$n/nvidia$g"; mknod "$dir/dev/$n/nvidia$g" c 195 "$g"; }
  done
done

gcc -shared -fPIC -O2 -Wall -Werror -o "$dir/fakepyxis.so.tmp" "$here/fakepyxis.c"
mv "$dir/fakepyxis.so.tmp" "$dir/fakepyxis.so"
echo "required $dir/fakepyxis.so" >"$dir/plugstack.conf"

# One munged per machine serves every cluster; start it only when none
# answers, and record its PID so stop.sh stops only a munged we started.
if ! munge -n </dev/null >/dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 1 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null >/dev/null 2>&1 || die "munged did not come up; see /var/log/munge/munged.log"
  cp /run/munge/munged.pid "$dir/run/munged.pid"
fi

export SLURM_CONF=$conf
# -c: no jobs or node states from a previous life of this directory.
slurmctld -c -f "$conf"
for n in "${nodes[@]}"; do slurmd -f "$conf" -N "$n"; done

ok=""
for _ in $(seq 1 100); do
  if healthy; then ok=1; break; fi
  sleep 0.2
done
if [ -z "$ok" ]; then
  sinfo -N -o '%N %T %E' >&2 || true
  for f in "$dir"/log/*.log; do echo "== $f" >&2; tail -n 15 "$f" >&2; done
  die "cluster did not come up within 20s (is port $port..$((port + nnodes)) taken? set WLC_SLURM_PORT); logs in $dir/log"
fi
sinfo -N -o '%N %T %c %m %G' >&2
print_exports
