# ---- Backend sweep (backends/runner/sweep.sh, in scripts of workloads with backend_sweep) ----

WLC_SERVE_EXTRA=()  # the flags a backend sweep adds to the server for one run
WLC_SWEEP_STATUS=() # "backend<TAB>outcome" per run of a backend sweep
WLC_SWEEP_DIR=''    # the current backend's folder under the workload's results

# wlc_sweep_run KIND BACKEND DIR STEPS [ARG...]: one server of a backend
# sweep, started with ARG... added, its results in DIR under the
# workload's results, STEPS (a function running every step) against it,
# then stopped. A server that never becomes ready is recorded in
# DIR/error.txt and the sweep goes on with the next backend (as
# perf-eval's run_attn_sweep.sh and run_moe_sweep.sh did); either way the
# job's status is the first failure's and the summary names the backend.
wlc_sweep_run() {
  local kind=$1 backend=$2 dir=$3 steps=$4 rc=0 before=${#WLC_FAILED[@]} i
  shift 4
  WLC_RESULTS_DIR=$WLC_SWEEP_ROOT/$dir
  WLC_BENCH_DIR=$WLC_SWEEP_BENCH/$dir
  WLC_SERVER_LOG=$WLC_RESULTS_DIR/server.log
  mkdir -p "$WLC_RESULTS_DIR"
  : >"$WLC_SERVER_LOG"
  WLC_SERVE_EXTRA=("$@")
  WLC_SERVER_GONE=0
  # The ingest's source_file names the backend's folder, as perf-eval's did.
  WLC_SWEEP_DIR=$dir
  wlc_log "=== $kind backend $backend (server flags: ${*:-none}); results in $WLC_RESULTS_DIR"
  wlc_server_start
  # The tools go where the clients run, while each server loads: a new
  # container has none; a venv the last server's clients used is reused.
  [ "${#WLC_TOOLS[@]}" -eq 0 ] || wlc_tools_start
  wlc_wait_ready || rc=$?
  if [ "$rc" -ne 0 ]; then
    wlc_log_settle
    wlc_sweep_error "$rc" >"$WLC_RESULTS_DIR/error.txt"
    wlc_log "$kind backend $backend: the server was not ready (status $rc), recorded in $WLC_RESULTS_DIR/error.txt; going on with the next backend"
    WLC_FAILED+=("$dir(server not ready)")
    [ "$WLC_STATUS" -ne 0 ] || WLC_STATUS=$rc
    WLC_SWEEP_STATUS+=("$backend"$'\t'"server not ready (status $rc): $(head -n 1 "$WLC_RESULTS_DIR/error.txt")")
  else
    wlc_sweep_selected "$kind" "$backend" >"$WLC_RESULTS_DIR/${kind}_backend.txt"
    "$steps"
    for ((i = before; i < ${#WLC_FAILED[@]}; i++)); do
      WLC_FAILED[i]="$dir/${WLC_FAILED[i]}"
    done
    if [ "${#WLC_FAILED[@]}" -gt "$before" ]; then
      WLC_SWEEP_STATUS+=("$backend"$'\t'"failed: ${WLC_FAILED[*]:before}")
    else
      WLC_SWEEP_STATUS+=("$backend"$'\t'"ok")
    fi
  fi
  wlc_server_stop
  wlc_stop_follower
  WLC_SERVE_EXTRA=()
}

# wlc_log_settle: a server that exited may still have its last lines, the
# error among them, on the way into WLC_SERVER_LOG where a runtime copies
# the log (docker: docker logs -f | tee): wait, at most 5 s, for the copier
# to end, then until the log stops growing.
wlc_log_settle() {
  local i size=-1 now
  if [ -n "$WLC_FOLLOWER_PID" ] && ! wlc_server_alive; then
    for ((i = 0; i < 50; i++)); do
      kill -0 "$WLC_FOLLOWER_PID" 2>/dev/null || break
      sleep 0.1
    done
  fi
  for ((i = 0; i < 20; i++)); do
    now=$(wc -c <"$WLC_SERVER_LOG" 2>/dev/null) || now=0
    if [ "$now" = "$size" ]; then
      return 0
    fi
    size=$now
    sleep 0.1
  done
}

# wlc_sweep_error STATUS: why the server did not start: its last Python
# error line (perf-eval kept the last ValueError or RuntimeError), else the
# end of its log.
wlc_sweep_error() {
  local line
  line=$(grep -aoE '[A-Za-z]*(Error|Exception): .+' "$WLC_SERVER_LOG" 2>/dev/null | tail -n 1) || true
  if [ -n "$line" ]; then
    printf '%s\n' "$line"
  else
    printf 'exit status %s; the last log lines:\n' "$1"
    tail -n 20 "$WLC_SERVER_LOG" 2>/dev/null || true
  fi
}

# wlc_sweep_selected KIND BACKEND: the backend a run used: the one named,
# or for "default" what vLLM's log says it chose.
wlc_sweep_selected() {
  if [ "$2" != default ]; then
    printf '%s\n' "$2"
    return 0
  fi
  grep -aoE 'Using [A-Za-z0-9_]+ (MoE )?backend|Overriding with [A-Za-z0-9_]+' "$WLC_SERVER_LOG" 2>/dev/null | sort -u ||
    echo unknown
}

# wlc_sweep_done: the sweep's summary, in the job log and in sweep.tsv.
wlc_sweep_done() {
  local s
  WLC_RESULTS_DIR=$WLC_SWEEP_ROOT
  WLC_BENCH_DIR=$WLC_SWEEP_BENCH
  printf 'backend\toutcome\n' >"$WLC_SWEEP_ROOT/sweep.tsv"
  for s in "${WLC_SWEEP_STATUS[@]}"; do
    printf '%s\n' "$s" >>"$WLC_SWEEP_ROOT/sweep.tsv"
    wlc_log "sweep: ${s/$'\t'/: }"
  done
}
