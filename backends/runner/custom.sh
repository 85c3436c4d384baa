# ---- Custom steps (backends/runner/custom.sh, in scripts of workloads with custom_steps) ----

# wlc_custom WHERE DIR -- CMD...: a custom step. On the server side it runs
# where vllm runs (wlc_in_server) and its DIR is copied into the results
# even when it fails; on the host it runs here and writes there directly.
wlc_custom() {
  local where=$1 dir=$2 rc=0
  shift 3
  if [ "$where" = host ]; then
    mkdir -p "$WLC_RESULTS_DIR/$dir"
    env "${WLC_ENV[@]}" "$@"
    return
  fi
  wlc_in_server mkdir -p "$WLC_BENCH_DIR/$dir" || return
  wlc_client "$@" || rc=$?
  wlc_fetch_result "$dir" || [ "$rc" -ne 0 ] || rc=1
  return "$rc"
}
