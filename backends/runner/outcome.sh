# ---- Exit classes (backends/runner/outcome.sh, the same in every job script) ----

# A job's exit status says whose failure it was. The infrastructure's
# (WLC_EXIT_INFRA above: image pull, GPU or node, out of memory while
# loading, communication, a server the system killed) are retried by the
# pipeline; any other failure is the workload's and never retried: the
# first failed step's own status (65: results that are not true; 2: an
# option the image's engine lacks; 124: the server was not ready in time;
# 127: a tool is missing). A workload status that happens to be an
# infrastructure one becomes 1, so it is not retried.
WLC_INFRA=''       # the infrastructure status, once a failure is known to be one
WLC_INFRA_WHY=''   # the line that shows it
WLC_DEATH_RC=''    # the server's status when it died on its own (wlc_server_died)
WLC_DEATH_FAILED=0 # how many steps had failed then (the one it took down among them)
WLC_REQUEUE=0      # 1 in a Slurm backend's job (submitted with --requeue): requeue on infrastructure failures
WLC_REQUEUE_MAX=${WLC_REQUEUE_MAX:-2} # at most this many requeues (SLURM_RESTART_COUNT counts them)

# wlc_infra_match FILE: prints "STATUS<TAB>LINE" for the first line of
# FILE that shows an infrastructure failure (the patterns are the messages
# of docker, the NVIDIA and ROCm runtimes, PyTorch, NCCL and Slurm);
# status 1 when none does.
wlc_infra_match() {
  local pattern status line
  for pattern in \
    "$WLC_EXIT_PULL"$'\t''Unable to find image|pull access denied|manifest unknown|toomanyrequests|failed to resolve reference|error pulling image|[Ee]rror response from daemon: (Get|Head) "?https?://' \
    "$WLC_EXIT_GPU"$'\t''could not select device driver|nvidia-container-cli|No CUDA GPUs are available|no CUDA-capable device is detected|busy or unavailable|CUDA driver initialization failed|Failed to initialize NVML|No HIP GPUs are available|hipErrorNoDevice|Unable to allocate resources|[Nn]ode failure|NODE_FAIL' \
    "$WLC_EXIT_OOM"$'\t''OutOfMemoryError|CUDA out of memory|HIP out of memory|CUDA error: out of memory|oom[-_]kill' \
    "$WLC_EXIT_COMM"$'\t''NCCL error|nccl(System|Internal|Remote|UnhandledCuda|InvalidUsage)Error|NCCL WARN|DistNetworkError|Gloo connectFullMesh failed|RCCL error'; do
    status=${pattern%%$'\t'*}
    line=$(grep -aE -m 1 -e "${pattern#*$'\t'}" "$1" 2>/dev/null) || continue
    printf '%s\t%s\n' "$status" "$line"
    return 0
  done
  return 1
}

# wlc_infra_from FILE: when FILE shows an infrastructure failure, records
# it (the first one found wins) and returns 0.
wlc_infra_from() {
  local found
  found=$(wlc_infra_match "$1") || return 1
  if [ -z "$WLC_INFRA" ]; then
    WLC_INFRA=${found%%$'\t'*}
    WLC_INFRA_WHY=${found#*$'\t'}
  fi
}

# wlc_docker ARG...: docker ARG... (stdout kept, stderr shown, and kept in
# the results as docker-<command>.err when it fails); a failure docker's message shows to be the registry's or
# the GPU runtime's ends the job with that infrastructure status, any other
# with docker's own.
wlc_docker() {
  local rc=0 err=$WLC_RESULTS_DIR/docker-$1.err t0
  wlc_now
  t0=$WLC_NOW
  docker "$@" 2>"$err" || rc=$?
  [ "$1" != pull ] || wlc_phase "image pull" "$t0"
  cat "$err" >&2 || true
  if [ "$rc" -eq 0 ]; then
    rm -f "$err"
    return 0
  fi
  if wlc_infra_from "$err"; then
    wlc_log "docker $1 failed (status $rc): $WLC_INFRA_WHY"
    exit "$WLC_INFRA"
  fi
  exit "$rc"
}

# wlc_server_died: the server exited on its own (while loading, or while
# the steps needed it); its status is kept for wlc_exit_status (a later
# stop sets WLC_SERVER_RC again).
wlc_server_died() {
  [ -z "$WLC_DEATH_RC" ] || return 0
  WLC_DEATH_RC=$WLC_SERVER_RC
  WLC_DEATH_FAILED=${#WLC_FAILED[@]}
}

# wlc_exit_status RC: sets WLC_EXIT, the job's exit status for a job that
# would end with RC, and says which class it is. A server that died on its
# own is the infrastructure's when its log shows why (or the system killed
# it: status 137, SIGKILL) and no step failed before it died (but the one
# it took down). A sweep's servers are its subject: their deaths are not.
wlc_exit_status() {
  local rc=$1 s
  WLC_EXIT=$rc
  [ "$rc" -ne 0 ] || return 0
  if [ -z "$WLC_INFRA" ] && [ -n "$WLC_DEATH_RC" ] && [ -z "${WLC_SWEEP_ROOT:-}" ] &&
    [ "$WLC_DEATH_FAILED" -le 1 ]; then
    if ! wlc_infra_from "$WLC_SERVER_LOG" && [ "$WLC_DEATH_RC" = 137 ]; then
      WLC_INFRA=$WLC_EXIT_KILLED
      WLC_INFRA_WHY="the server was killed (SIGKILL: the kernel's OOM killer, or the node was drained)"
    fi
  fi
  if [ -n "$WLC_INFRA" ]; then
    WLC_EXIT=$WLC_INFRA
    wlc_log "exit class: infrastructure (status $WLC_EXIT; the pipeline retries it): $WLC_INFRA_WHY"
    return 0
  fi
  for s in "${WLC_EXIT_INFRA[@]}"; do
    [ "$rc" != "$s" ] || WLC_EXIT=1
  done
  wlc_log "exit class: workload (status $WLC_EXIT; not retried)"
}

# wlc_requeue (the EXIT trap, last): a Slurm backend's job that failed for the infrastructure
# asks Slurm to run it again (scontrol requeue: back to pending, the same
# job id, SLURM_RESTART_COUNT one more), at most WLC_REQUEUE_MAX times.
# Not under Buildkite: its step retries the job (a requeue there would run
# it twice as often), and never for a workload failure.
wlc_requeue() {
  local n=${SLURM_RESTART_COUNT:-0}
  [ -n "$WLC_INFRA" ] && [ "$WLC_REQUEUE" = 1 ] && [ -n "${SLURM_JOB_ID:-}" ] && [ -z "${BUILDKITE_JOB_ID:-}" ] || return 0
  if [ "$n" -ge "$WLC_REQUEUE_MAX" ]; then
    wlc_log "not requeued: job $SLURM_JOB_ID ran $((n + 1)) times (WLC_REQUEUE_MAX $WLC_REQUEUE_MAX)"
    return 0
  fi
  if scontrol requeue "$SLURM_JOB_ID"; then
    wlc_log "requeued job $SLURM_JOB_ID (requeue $((n + 1)) of $WLC_REQUEUE_MAX)"
    # Slurm ends this run now; one that ended first, failed, would show
    # as FAILED to whoever watches the job before it is pending again.
    sleep 300 || true
  else
    wlc_log "scontrol requeue $SLURM_JOB_ID failed; the job ends with status $WLC_EXIT"
  fi
}
