# ---- Provenance (backends/runner/provenance.sh, the same in every job script) ----

# The job writes provenance.json beside its results when it ends, whatever
# the outcome: what ran (the job's hash WLC_JOB_HASH, as `wlc show` prints
# it; the image and the digest run; the engine's version; the GPUs as the
# node reports them; the server's argv and env, secrets by name only; each
# step's argv and status) and how long each phase took (wall clock).
# `wlc diff --results` reads job_hash, wall_seconds and finished_at
# (plandiff.ProvenanceFile). Written in bash: a docker host may have no python3.
WLC_PHASES=()      # "name<TAB>microseconds" per phase, in order
WLC_STEPS_JSON=()  # one JSON object per step
WLC_GPU_INFO=''    # "vendor<TAB>model<TAB>count<TAB>driver", once the server is ready
WLC_IMAGE_DIGEST='' # the digest of the image run (docker image inspect)
WLC_IMAGE_ID=''
WLC_NOW=0          # set by wlc_now: microseconds since the epoch
WLC_LOAD_START=0   # when the current server's load began
wlc_now() { WLC_NOW=${EPOCHREALTIME//[^0-9]/}; }
wlc_now
WLC_JOB_START=$WLC_NOW

# wlc_phase NAME START: records phase NAME from START (wlc_now's) to now.
wlc_phase() {
  wlc_now
  WLC_PHASES+=("$1"$'\t'"$((WLC_NOW - $2))")
}

# wlc_seconds US: microseconds as seconds with three decimals.
wlc_seconds() { printf '%d.%03d' "$(($1 / 1000000))" "$(($1 % 1000000 / 1000))"; }

# wlc_json S: S as a JSON string (control characters escaped).
wlc_json() {
  local s=$1 out='' c i
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  if [[ $s == *[$'\x01'-$'\x1f\x7f']* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [$'\x01'-$'\x1f\x7f'] ]]; then
        printf -v c '\\u%04x' "'$c"
      fi
      out+=$c
    done
    s=$out
  fi
  printf '"%s"' "$s"
}

# wlc_json_list S...: the arguments as a JSON list of strings.
wlc_json_list() {
  local a sep=''
  printf '['
  for a in "$@"; do
    printf '%s' "$sep"
    wlc_json "$a"
    sep=', '
  done
  printf ']'
}

# wlc_step_record LABEL START STATUS CMD...: one step ran (wlc_step): its
# phase, and its argv (an embedded program as the variable holding it,
# e.g. $WLC_BFCL_PY) and status for provenance.json.
wlc_step_record() {
  local label=$1 start=$2 rc=$3 argv=() a v
  shift 3
  wlc_phase "$label" "$start"
  # A program the script carries is named as the script names it.
  for a in "$@"; do
    for v in WLC_BFCL_PY WLC_SPEED_BENCH_PY WLC_RESULTS_PY WLC_INGEST_PY; do
      if [ "$a" = "${!v:-}" ]; then
        a="\$$v"
        break
      fi
    done
    argv+=("$a")
  done
  WLC_STEPS_JSON+=("{\"name\": $(wlc_json "$label"), \"argv\": $(wlc_json_list "${argv[@]}"), \"status\": $rc, \"seconds\": $(wlc_seconds "$((WLC_NOW - start))")}")
}

# WLC_GPU_QUERY_SH asks the node, where the server runs, for its GPUs as
# the driver's tool reports them: one line "vendor<TAB>model<TAB>count<TAB>driver".
WLC_GPU_QUERY_SH='if command -v nvidia-smi >/dev/null 2>&1; then
  out=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) || exit 1
  first=$(printf "%s\n" "$out" | head -n 1)
  printf "nvidia\t%s\t%s\t%s\n" "${first%, *}" "$(printf "%s\n" "$out" | grep -c .)" "${first##*, }"
elif command -v rocm-smi >/dev/null 2>&1; then
  out=$(rocm-smi --showproductname --showdriverversion --json) || exit 1
  printf "amd\t%s\t%s\t%s\n" \
    "$(printf "%s" "$out" | grep -oiE "\"card series\": *\"[^\"]*\"" | head -n 1 | sed "s/.*: *\"//; s/\"$//")" \
    "$(printf "%s" "$out" | grep -oiE "\"card series\": *\"" | grep -c .)" \
    "$(printf "%s" "$out" | grep -oE "\"Driver version\": *\"[^\"]*\"" | sed "s/.*: *\"//; s/\"$//")"
fi'

# wlc_provenance_ready: the server is ready: its load is a phase; the
# GPUs it runs on and the image's digest are asked for now (the node and
# the container exist now).
wlc_provenance_ready() {
  wlc_phase "server load" "$WLC_LOAD_START"
  [ -n "$WLC_GPU_INFO" ] || WLC_GPU_INFO=$(wlc_in_server bash -c "$WLC_GPU_QUERY_SH" 2>/dev/null | head -n 1) || WLC_GPU_INFO=''
  if [ -z "$WLC_IMAGE_DIGEST" ] && [ -n "${WLC_IMAGE:-}" ] && command -v docker >/dev/null 2>&1; then
    WLC_IMAGE_DIGEST=$(docker image inspect --format '{{index .RepoDigests 0}}' "$WLC_IMAGE" 2>/dev/null) || WLC_IMAGE_DIGEST=''
    WLC_IMAGE_ID=$(docker image inspect --format '{{.Id}}' "$WLC_IMAGE" 2>/dev/null) || WLC_IMAGE_ID=''
  fi
}

# wlc_engine_version: the version the engine printed in the server log
# (vLLM: "vLLM API server version X"; the preflight: "[wlc preflight]
# vLLM X;" or "SGLang X;"), or nothing.
wlc_engine_version() {
  local v
  v=$(grep -aoE 'vLLM API server version [^ ]+' "$WLC_SERVER_LOG" 2>/dev/null | head -n 1) ||
    v=$(grep -aoE '\[wlc preflight\] (vLLM|SGLang) [^ ;]+' "$WLC_SERVER_LOG" 2>/dev/null | head -n 1) || v=''
  printf '%s' "${v##* }"
}

# wlc_json_or_null S: S as a JSON string, or null when empty.
wlc_json_or_null() { if [ -n "$1" ]; then wlc_json "$1"; else printf null; fi; }

# wlc_provenance_write STATUS: writes provenance.json (aside, then
# renamed: never half a file) into the results directory. Best effort: a
# problem is one line, the job's status stays.
wlc_provenance_write() {
  local rc=$1 out=${WLC_SWEEP_ROOT:-$WLC_RESULTS_DIR}/provenance.json p sep='' vendor='' model='' count='' driver='' class=workload
  [ "$rc" -ne 0 ] || class=ok
  [ -z "$WLC_INFRA" ] || class=infrastructure
  IFS=$'\t' read -r vendor model count driver <<<"$WLC_GPU_INFO" || true
  [[ $count =~ ^[0-9]+$ ]] || count=null
  wlc_now
  {
    printf '{\n  "job_hash": %s,\n' "$(wlc_json_or_null "${WLC_JOB_HASH:-}")"
    printf '  "workload": %s,\n  "run_id": %s,\n' "$(wlc_json "$WLC_WORKLOAD")" "$(wlc_json "$WLC_RUN_ID")"
    printf '  "plan": %s,\n' "$WLC_PROVENANCE_PLAN"
    printf '  "image": {"digest": %s, "id": %s},\n' "$(wlc_json_or_null "$WLC_IMAGE_DIGEST")" "$(wlc_json_or_null "$WLC_IMAGE_ID")"
    printf '  "engine_version": %s,\n' "$(wlc_json_or_null "$(wlc_engine_version)")"
    printf '  "gpus": {"vendor": %s, "model": %s, "count": %s, "driver": %s},\n' \
      "$(wlc_json_or_null "$vendor")" "$(wlc_json_or_null "$model")" "$count" "$(wlc_json_or_null "$driver")"
    printf '  "host": %s,\n' "$(wlc_json "$(hostname 2>/dev/null || uname -n)")"
    printf '  "steps": ['
    for p in "${WLC_STEPS_JSON[@]}"; do
      printf '%s\n    %s' "$sep" "$p"
      sep=','
    done
    printf '%s],\n  "phases": [' "${sep:+$'\n  '}"
    sep=''
    for p in "${WLC_PHASES[@]}"; do
      printf '%s\n    {"name": %s, "seconds": %s}' "$sep" "$(wlc_json "${p%%$'\t'*}")" "$(wlc_seconds "${p#*$'\t'}")"
      sep=','
    done
    printf '%s],\n' "${sep:+$'\n  '}"
    printf '  "wall_seconds": %s,\n' "$(wlc_seconds "$((WLC_NOW - WLC_JOB_START))")"
    printf '  "finished_at": %s,\n' "$(wlc_json "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
    printf '  "exit_status": %s,\n  "exit_class": "%s"\n}\n' "$rc" "$class"
  } >"$out.tmp" 2>/dev/null
  if ! mv -f "$out.tmp" "$out" 2>/dev/null; then
    rm -f "$out.tmp"
    wlc_log "provenance: could not write $out"
    return 0
  fi
  wlc_log "provenance: $out"
}
