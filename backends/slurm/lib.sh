# ---- slurm runtime (backends/slurm/lib.sh, the same in every sbatch script) ----
# The contract functions backends/runner/lib.sh calls, for servers that run
# as srun steps of this job: one step per node, rank r on WLC_HOSTS[r].
# The script defines wlc_server_start and wlc_in_server below these.

WLC_SERVER_PIDS=() # srun of each server step, by rank
WLC_SERVER_NAMES=() # what each server step is, when not "rank N on HOST"
WLC_SERVER_LOGS=()  # where each server step's output goes, when not wlc_server_log's default
WLC_DEAD_RANK=''   # the first server step that ended
WLC_DEAD_RC=0      # its exit status
WLC_CLIENT_PID=''  # srun of the running client step

# wlc_hosts: WLC_HOSTS are the allocated hosts in order; the first is the
# head, which runs rank 0, the health wait and the client steps. The batch
# step runs there too, so the server is reached on 127.0.0.1.
wlc_hosts() {
  mapfile -t WLC_HOSTS < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
  if [ "${#WLC_HOSTS[@]}" -ne "$WLC_NODES" ]; then
    wlc_log "the job has ${#WLC_HOSTS[@]} host(s) (${WLC_HOSTS[*]:-none} from SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST) but the server needs $WLC_NODES"
    exit 1
  fi
  WLC_HEAD=${WLC_HOSTS[0]}
  if [ -n "${SLURMD_NODENAME:-}" ] && [ "$SLURMD_NODENAME" != "$WLC_HEAD" ]; then
    wlc_log "the batch step runs on $SLURMD_NODENAME, not on the head node $WLC_HEAD"
    exit 1
  fi
}

# wlc_server_log RANK: where rank RANK's output goes.
wlc_server_log() {
  if [ -n "${WLC_SERVER_LOGS[$1]:-}" ]; then
    printf '%s\n' "${WLC_SERVER_LOGS[$1]}"
  elif [ "$1" = 0 ]; then
    printf '%s\n' "$WLC_SERVER_LOG"
  else
    printf '%s\n' "$WLC_RESULTS_DIR/server-rank$1.log"
  fi
}

# wlc_server_alive: every server step still runs. The first one found
# ended is remembered (rank and status) for wlc_server_exit_code.
wlc_server_alive() {
  local rank pid rc
  [ -z "$WLC_DEAD_RANK" ] || return 1
  [ "${#WLC_SERVER_PIDS[@]}" -gt 0 ] || return 1
  for rank in "${!WLC_SERVER_PIDS[@]}"; do
    pid=${WLC_SERVER_PIDS[$rank]}
    if ! kill -0 "$pid" 2>/dev/null; then
      rc=0
      wait "$pid" || rc=$?
      WLC_DEAD_RANK=$rank
      WLC_DEAD_RC=$rc
      wlc_log "server ${WLC_SERVER_NAMES[$rank]:-rank $rank on ${WLC_HOSTS[$rank]}} ended (status $rc)"
      return 1
    fi
  done
}

wlc_server_exit_code() { WLC_SERVER_RC=$WLC_DEAD_RC; }

wlc_server_log_tail() {
  local rank=${WLC_DEAD_RANK:-0}
  tail -n 80 "$(wlc_server_log "$rank")" 2>/dev/null | sed "s/^/  ${WLC_SERVER_NAMES[$rank]:-rank $rank} | /" >&2 || true
}

# wlc_server_listens: the servers run in srun steps, whose processes are
# not this script's to inspect; the port's claim and wlc_port_alone guard
# it.
wlc_server_listens() { :; }

# wlc_watch PID: waits for the client step PID, stopping it (and failing
# with the server's status) as soon as a server step ends.
wlc_watch() {
  local rc=0
  WLC_CLIENT_PID=$1
  while kill -0 "$WLC_CLIENT_PID" 2>/dev/null; do
    if ! wlc_server_alive; then
      wlc_stop "$WLC_CLIENT_PID"
      WLC_CLIENT_PID=''
      [ "$WLC_DEAD_RC" -ne 0 ] && return "$WLC_DEAD_RC"
      return 1
    fi
    sleep 0.5
  done
  wait "$WLC_CLIENT_PID" || rc=$?
  WLC_CLIENT_PID=''
  return "$rc"
}

# wlc_stop PID...: SIGTERM to each srun (it forwards the signal to its
# task), SIGKILL after WLC_STOP_TIMEOUT_S; then reaps them. Anything left
# ends with the job: Slurm kills every step when this script exits.
wlc_stop() {
  local pid alive deadline=$((SECONDS + WLC_STOP_TIMEOUT_S))
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  while :; do
    alive=()
    for pid in "$@"; do
      if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi
    done
    [ "${#alive[@]}" -gt 0 ] || break
    if [ "$SECONDS" -ge "$deadline" ]; then
      wlc_log "killing ${#alive[@]} step(s) that ignored SIGTERM for ${WLC_STOP_TIMEOUT_S}s"
      kill -KILL "${alive[@]}" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}

# wlc_server_stop: stops the running client step and every server step.
wlc_server_stop() {
  local pids=("${WLC_SERVER_PIDS[@]}")
  [ -z "$WLC_CLIENT_PID" ] || pids+=("$WLC_CLIENT_PID")
  [ "${#pids[@]}" -gt 0 ] || return 0
  wlc_log "stopping ${#WLC_SERVER_PIDS[@]} server step(s)"
  wlc_stop "${pids[@]}"
  WLC_CLIENT_PID=''
}

# wlc_fetch_dir DIR: the same for a directory of results.
wlc_fetch_dir() {
  [ -d "$WLC_RESULTS_DIR/$1" ] && return 0
  wlc_log "$1/ was written where this job cannot see it: $WLC_RESULTS_DIR/$1 is missing"
  return 1
}

# wlc_fetch_result FILE: the client wrote FILE into the shared results
# directory; a missing file means the container's working directory is
# not the submission directory (check pyxis.workdir and its mount).
wlc_fetch_result() {
  [ -s "$WLC_RESULTS_DIR/$1" ] && return 0
  wlc_log "$1 was written where this job cannot see it: $WLC_RESULTS_DIR/$1 is missing"
  return 1
}
