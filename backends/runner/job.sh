# ---- Custom job (backends/runner/job.sh, in scripts of workloads with a custom_job) ----

# wlc_job WHERE DIR -- CMD...: the custom job, instead of a server. With
# the GPUs (gpus) it runs where the server would (the runtime's
# wlc_job_run) and its DIR is brought back even when it fails; on the host
# it runs here and writes there directly. Its status is the job's.
wlc_job() {
  local where=$1 dir=$2 rc=0
  shift 3
  if [ "$where" = host ]; then
    mkdir -p "$WLC_RESULTS_DIR/$dir"
    env "${WLC_ENV[@]}" "$@"
    return
  fi
  wlc_job_run "$dir" env "${WLC_ENV[@]}" "$@" || rc=$?
  wlc_fetch_dir "$dir" || [ "$rc" -ne 0 ] || rc=1
  return "$rc"
}
