# ---- disaggregated serving (backends/slurm/pd.sh, the same in every PD sbatch script) ----
# Prefill and decode instances run as one srun step each on their nodes,
# the router as a process of this batch step on the first node. Every one
# of them is a server step to lib.sh: any of them ending fails the job.

# WLC_INSTANCE_MAIN runs on each node of an instance step (bash -c, inside
# the container): wlc-instance LOCAL_DP HOST ADDR... -- VLLM_ARGV...
# It finds this node among HOST ADDR pairs, tells NixlConnector the node's
# address for its side channel, adds this node's first data-parallel rank
# when the instance is data parallel (LOCAL_DP ranks per node), and execs
# vllm.
WLC_INSTANCE_MAIN='set -eu
me=${SLURMD_NODENAME:?}
local_dp=$1
shift
i=0 rank="" addr=""
while [ "$1" != -- ]; do
  if [ "$1" = "$me" ]; then rank=$i addr=$2; fi
  i=$((i + 1))
  shift 2
done
shift
if [ -z "$rank" ]; then
  echo "wlc: node $me is not a node of this instance" >&2
  exit 2
fi
export VLLM_NIXL_SIDE_CHANNEL_HOST=$addr
if [ "$local_dp" -gt 0 ]; then
  set -- "$@" --data-parallel-start-rank "$((rank * local_dp))"
fi
exec "$@"'

# wlc_node_addrs: WLC_ADDRS[i] is the address other nodes reach
# WLC_HOSTS[i] at: Slurm's NodeAddr (node names need not resolve).
wlc_node_addrs() {
  local i line addr
  WLC_ADDRS=()
  for i in "${!WLC_HOSTS[@]}"; do
    line=$(scontrol show node -o "${WLC_HOSTS[$i]}" 2>/dev/null) || line=''
    addr=${line##*NodeAddr=}
    addr=${addr%% *}
    if [ -z "$line" ] || [ "$addr" = "$line" ] || [ -z "$addr" ]; then
      addr=${WLC_HOSTS[$i]}
    fi
    WLC_ADDRS[i]=$addr
  done
}

# wlc_wait_urls TIMEOUT WHAT URL...: polls every URL until each answers,
# every WLC_POLL_S seconds for at most TIMEOUT seconds. Returns the status
# of the first server step that ends meanwhile (at least 1), 124 on timeout,
# printing that step's last log lines; a failed install of the client tools
# ends the job meanwhile (wlc_tools_done).
wlc_wait_urls() {
  local timeout=$1 what=$2 start=$SECONDS url pending
  shift 2
  local deadline=$((SECONDS + timeout)) progress=$((SECONDS + 60))
  wlc_log "waiting up to ${timeout}s for $what: $*"
  while :; do
    if ! wlc_server_alive; then
      wlc_server_exit_code
      [ "$WLC_SERVER_RC" -ne 0 ] || WLC_SERVER_RC=1
      wlc_log "$what: a server step exited (status $WLC_SERVER_RC) before it was ready; its last log lines:"
      wlc_server_log_tail
      return "$WLC_SERVER_RC"
    fi
    # A failed install of the client tools ends the job now, not once
    # every instance has loaded (wlc_tools_done exits with its status).
    wlc_tools_done || :
    pending=()
    for url in "$@"; do
      curl -fsS -o /dev/null --max-time 10 "$url" 2>/dev/null || pending+=("$url")
    done
    if [ "${#pending[@]}" -eq 0 ]; then
      wlc_log "$what ready after $((SECONDS - start))s"
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      wlc_log "$what not ready within ${timeout}s: ${pending[*]} did not answer"
      return 124
    fi
    if [ "$SECONDS" -ge "$progress" ]; then
      wlc_log "still waiting for ${pending[*]} ($((SECONDS - start))s)"
      progress=$((SECONDS + 60))
    fi
    sleep "$WLC_POLL_S"
  done
}
