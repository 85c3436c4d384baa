# ---- Shared functions (backends/runner/lib.sh, the same in every job script) ----

WLC_STATUS=0        # exit status of the first failed step; the script's exit status
WLC_STEP_RC=0       # exit status of the last step (its results reach the dashboards only if 0)
WLC_ALLOW_FAILED='' # set for a bench step whose config allows failed requests: the reason
# The dashboards' token reaches one command, the sender's curl, and no
# process's environment: a script started with INGEST_BEARER_TOKEN (or
# WLC_INGEST_TOKEN_FILE, a file holding it) writes the curl header into a
# 0600 file of its own private directory and starts itself again without
# them (its environment, /proc/<pid>/environ, is readable by everything the
# job runs as this user for the job's whole life); curl reads the header
# from that file when it sends (wlc_ingest_send), and the EXIT trap
# removes it. Neither the server, the clients nor srun steps inherit the
# token or the path.
# wlc_token_read: the token from INGEST_BEARER_TOKEN, else the first line
# of the file WLC_INGEST_TOKEN_FILE names (Buildkite's helpers/token.sh),
# without surrounding blanks.
wlc_token_read() {
  read -r WLC_INGEST_TOKEN <<<"${INGEST_BEARER_TOKEN:-}" || true
  if [ -z "$WLC_INGEST_TOKEN" ] && [ -n "${WLC_INGEST_TOKEN_FILE:-}" ]; then
    read -r WLC_INGEST_TOKEN <"$WLC_INGEST_TOKEN_FILE" || [ -n "$WLC_INGEST_TOKEN" ] ||
      printf '[wlc] ingest: no token in WLC_INGEST_TOKEN_FILE (%s)\n' "$WLC_INGEST_TOKEN_FILE" >&2
  fi
}
# wlc_token_handoff ARG...: the header file, then this script again
# ($0: bash job.sh, sbatch's copy) without the token in its environment.
wlc_token_handoff() {
  local dir items=() keep=() i slurm=()
  [ -r "$0" ] || return 1
  # sbatch --export=...,INGEST_BEARER_TOKEN=... leaves the list in
  # SLURM_EXPORT_ENV, srun's default --export: every step would get it back.
  if [[ ${SLURM_EXPORT_ENV:-} == *INGEST_BEARER_TOKEN=* || ${SLURM_EXPORT_ENV:-} == *WLC_INGEST_TOKEN_FILE=* ]]; then
    IFS=, read -ra items <<<"$SLURM_EXPORT_ENV"
    for i in "${items[@]}"; do
      case $i in INGEST_BEARER_TOKEN=* | WLC_INGEST_TOKEN_FILE=*) ;; *) keep+=("$i") ;; esac
    done
    slurm=("SLURM_EXPORT_ENV=$(IFS=,; printf '%s' "${keep[*]}")")
  fi
  dir=$(umask 077 && mktemp -d "${TMPDIR:-/tmp}/wlc-ingest.XXXXXX") || return 1
  if ! (umask 077 && printf 'Authorization: Bearer %s\n' "$WLC_INGEST_TOKEN" >"$dir/header"); then
    rm -rf -- "$dir"
    return 1
  fi
  exec env -u INGEST_BEARER_TOKEN -u WLC_INGEST_TOKEN_FILE "${slurm[@]}" WLC_INGEST_HEADER="$dir/header" "$BASH" "$0" "$@"
}
WLC_INGEST_TOKEN=''
if [ -z "${WLC_INGEST_HEADER:-}" ] && { [ -n "${INGEST_BEARER_TOKEN:-}" ] || [ -n "${WLC_INGEST_TOKEN_FILE:-}" ]; }; then
  wlc_token_read
  if [ -n "$WLC_INGEST_TOKEN" ] && ! wlc_token_handoff "$@"; then
    # The fallback: the token in an unexported variable, curl reading it on stdin.
    printf '[wlc] ingest: the token stays in this shell'"'"'s environment (no private directory, or the script is not a file)\n' >&2
  fi
fi
WLC_INGEST_HEADER=${WLC_INGEST_HEADER:-}
export -n WLC_INGEST_HEADER WLC_INGEST_TOKEN
unset INGEST_BEARER_TOKEN WLC_INGEST_TOKEN_FILE
# wlc_token_forget: the header file and its directory go (at exit: this
# trap, then wlc_on_exit once wlc_init installed it); only the file and an
# empty directory, whatever the path says.
wlc_token_forget() {
  [ -n "$WLC_INGEST_HEADER" ] || return 0
  rm -f -- "$WLC_INGEST_HEADER"
  rmdir -- "${WLC_INGEST_HEADER%/*}" 2>/dev/null || true
}
trap wlc_token_forget EXIT
WLC_FAILED=()       # labels of the failed steps, for the summary
WLC_SERVER_GONE=0   # 1 once the server died, shared once another server listens on its port: the remaining steps are skipped; none: no server (a custom job)
WLC_PORT_LOCKS=${WLC_PORT_LOCKS:-/tmp/wlc-ports} # this host's port claims (wlc_claim_port)
WLC_PORT_FD=''      # the descriptor holding this job's claim
WLC_FOREIGN_TOLD=0  # 1 once another server was seen answering on the port
WLC_PORT_SOCKETS=() # set by wlc_port_sockets
WLC_SERVER_RC=0     # the server's exit status, set by wlc_server_exit_code
WLC_FOLLOWER_PID='' # the process copying the server log into this job's log
WLC_TOOLS=()        # the client tools the steps need (name, mode, modules, packages), set below
WLC_TOOLS_PID=''    # the client tools' install, running while the server loads
WLC_TOOLS_BEGAN=0      # when it started (wlc_now)
WLC_TOOLS_VENV=${WLC_TOOLS_VENV:-} # their virtual environment (the runtime's default unless set)
WLC_TOOLS_OWN=0     # 1: the venv is this job's own, removed at exit

# The time is printf's own (no date process per line: a job logs on its
# critical path, between the server's readiness and the first request).
wlc_log() { TZ=UTC0 printf '[wlc %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# wlc_require TOOL...: stops before anything starts when a tool is missing.
wlc_require() {
  local tool missing=()
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    wlc_log "not on PATH: ${missing[*]}"
    exit 127
  fi
}

# wlc_warn_unset NAME...: secrets pass by name; say which ones are empty.
wlc_warn_unset() {
  local name
  for name in "$@"; do
    [ -n "${!name:-}" ] || wlc_log "warning: $name is not set; the server gets no $name"
  done
}

# wlc_init: names this run, installs the teardown trap, creates the results
# directory and chooses the port. Run ids come from the CI system, so two
# jobs on one host never share a container name or a port.
wlc_init() {
  WLC_RUN_ID=${WLC_RUN_ID:-${BUILDKITE_JOB_ID:-${SLURM_JOB_ID:-$$-$(date +%s)}}}
  # Polls are cheap (a refused connection while the model loads) and the
  # GPUs are held: a ready server is seen within a quarter second.
  WLC_POLL_S=${WLC_POLL_S:-0.25}
  # TERM, then KILL after this: inside the 10 s a CI agent gives a
  # cancelled job before it kills the script (Buildkite's default
  # cancel-grace-period), so the server (in its own session) is never
  # left running.
  WLC_STOP_TIMEOUT_S=${WLC_STOP_TIMEOUT_S:-8}
  WLC_HOST=${WLC_HOST:-127.0.0.1}
  WLC_DATA_DIR=${WLC_DATA_DIR:-/tmp/wlc-data} # prepared datasets, where the clients run
  # NeMo-Skills' SPEED-Bench preparation, which perf-eval used too, at a
  # fixed commit: its main branch moves, and a new prepare.py would
  # prepare other prompts under the same dataset name.
  WLC_SPEED_BENCH_PREPARE_URL=${WLC_SPEED_BENCH_PREPARE_URL:-https://raw.githubusercontent.com/NVIDIA-NeMo/Skills/aeda1da41ec2888848ffa094305b7669df493f6c/nemo_skills/dataset/speed-bench/prepare.py}
  # The content prepare.py must have, for a URL that is not a commit's.
  WLC_SPEED_BENCH_PREPARE_SHA256=${WLC_SPEED_BENCH_PREPARE_SHA256:-}
  trap wlc_on_exit EXIT
  trap 'wlc_log "interrupted"; exit 130' INT
  trap 'wlc_log "terminated"; exit 143' TERM
  mkdir -p "$WLC_RESULTS_DIR"
  WLC_SERVER_LOG=$WLC_RESULTS_DIR/server.log
  : >"$WLC_SERVER_LOG"
  wlc_pick_port
  WLC_BASE_URL=http://$WLC_HOST:$WLC_PORT
  wlc_log "workload $WLC_WORKLOAD, run $WLC_RUN_ID, server $WLC_BASE_URL, results in $WLC_RESULTS_DIR"
}

# wlc_port_free PORT: nothing accepts connections on PORT here.
wlc_port_free() { ! (exec 3<>"/dev/tcp/$WLC_HOST/$1") 2>/dev/null; }

# wlc_pick_port sets WLC_PORT: $WLC_PORT if set, else the workload's port,
# else a port derived from the run id (cksum into 20000-32767) and, when
# that one is taken, the next free one. A fixed port that is taken fails
# now rather than after the model loaded. The range ends below Linux's
# ephemeral ports (32768-60999): a connect probe cannot see a port some
# client holds as its source port, and bind would then fail. The port is
# claimed first (wlc_claim_port), so a job starting beside this one skips
# it even before the server binds it.
wlc_pick_port() {
  local port=${WLC_PORT:-$WLC_WORKLOAD_PORT} sum i
  if [ -n "$port" ]; then
    if ! wlc_claim_port "$port"; then
      wlc_log "port $port is claimed by another wlc job on this host ($WLC_PORT_LOCKS/$port); set WLC_PORT to a free port"
      exit 1
    fi
    if ! wlc_port_free "$port"; then
      wlc_log "port $port is in use (another job on this host?); set WLC_PORT to a free port"
      exit 1
    fi
    WLC_PORT=$port
    return 0
  fi
  sum=$(printf '%s' "$WLC_RUN_ID" | cksum)
  port=$((20000 + ${sum%% *} % 12768))
  for ((i = 0; i < 100; i++)); do
    if wlc_claim_port "$port"; then
      if wlc_port_free "$port"; then
        WLC_PORT=$port
        return 0
      fi
      wlc_unclaim_port
    fi
    port=$((20000 + (port - 20000 + 1) % 12768))
  done
  wlc_log "no free port among the 100 after the one derived from run $WLC_RUN_ID; set WLC_PORT"
  exit 1
}

# wlc_claim_port PORT: takes this host's claim on PORT: an flock on the file
# $WLC_PORT_LOCKS/PORT, held on a descriptor the server and every other
# child inherit, so the claim lasts while anything of the job does and the
# kernel drops it when the last of them exits (a killed job leaves nothing
# to clean up; the files stay, empty, as removing one would race with a
# job opening it). A free-port probe alone lets two jobs starting side by
# side pick one port before either server binds it, and vLLM binds with
# SO_REUSEPORT: both servers would serve it and each job's clients reach
# either. Fails when another job holds PORT; where flock or the directory
# is missing, claims are skipped (the probe and wlc_port_alone remain).
wlc_claim_port() {
  local f=$WLC_PORT_LOCKS/$1
  command -v flock >/dev/null 2>&1 || return 0
  [ -d "$WLC_PORT_LOCKS" ] || mkdir -m 1777 "$WLC_PORT_LOCKS" 2>/dev/null || [ -d "$WLC_PORT_LOCKS" ] || return 0
  if [ ! -e "$f" ]; then
    # Readable by every user's jobs: flock needs only a read descriptor.
    : >>"$f" 2>/dev/null && chmod 0644 "$f" 2>/dev/null
  fi
  [ -r "$f" ] || return 0
  exec {WLC_PORT_FD}<"$f"
  flock -n "$WLC_PORT_FD" && return 0
  wlc_unclaim_port
  return 1
}

# wlc_unclaim_port: gives the claim up (the port was not free after all).
wlc_unclaim_port() {
  [ -z "$WLC_PORT_FD" ] || exec {WLC_PORT_FD}<&-
  WLC_PORT_FD=''
}

# wlc_port_sockets sets WLC_PORT_SOCKETS to the inodes of the sockets
# listening on $WLC_PORT here (Linux's /proc/net/tcp and tcp6; none where
# the server's socket is not visible: another host, network namespace or
# system). Read by bash itself: it runs between readiness and the first
# request, where every process started costs milliseconds.
wlc_port_sockets() {
  local port f line lines=() fields=()
  printf -v port '%04X' "$WLC_PORT"
  WLC_PORT_SOCKETS=()
  for f in /proc/net/tcp /proc/net/tcp6; do
    # mapfile, not a read loop: read takes a /proc file a byte a call,
    # and the kernel walks its socket tables for each.
    [ -r "$f" ] || continue
    mapfile -t lines <"$f"
    for line in "${lines[@]:1}"; do
      # sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
      read -r -a fields <<<"$line"
      [ "${fields[3]}" != 0A ] || [ "${fields[1]##*:}" != "$port" ] || WLC_PORT_SOCKETS+=("${fields[9]}")
    done
  done
}

# wlc_port_alone: at most one socket listens on $WLC_PORT. vLLM binds with
# SO_REUSEPORT, so a second server started on the port (by hand, or by a
# job whose claims live in another /tmp) binds it too and the kernel
# splits the connections between them: requests would reach a server of
# another configuration and the results would mix. Says so and fails then.
wlc_port_alone() {
  wlc_port_sockets
  [ "${#WLC_PORT_SOCKETS[@]}" -gt 1 ] || return 0
  if [ -z "$WLC_INFRA" ]; then
    WLC_INFRA=$WLC_EXIT_PORT
    WLC_INFRA_WHY="another server listens on port $WLC_PORT beside this job's"
  fi
  wlc_log "${#WLC_PORT_SOCKETS[@]} sockets listen on port $WLC_PORT: another server shares it with this job's (vLLM binds with SO_REUSEPORT), so requests would reach either and the results would mix; stopping (set WLC_PORT to a port nothing else uses)"
  return 1
}

# wlc_lists_model JSON: the /v1/models response lists $WLC_MODEL exactly
# (compared as the JSON string $WLC_MODEL_JSON, closing quote included, so a
# longer name with the same prefix does not count).
wlc_lists_model() {
  local compact
  compact=$(printf '%s' "$1" | sed 's/"id"[[:space:]]*:[[:space:]]*"/"id":"/g')
  case $compact in
    *"\"id\":$WLC_MODEL_JSON"*) return 0 ;;
  esac
  return 1
}

# wlc_wait_ready: polls /health, then /v1/models for the model, every
# WLC_POLL_S seconds for at most WLC_STARTUP_TIMEOUT_S, and the client
# tools' install (wlc_tools_start) beside it: returns once both are done.
# Returns the server's exit status (at least 1) as soon as it dies, 124 on
# timeout, printing the last server log lines either way; a failed install
# ends the job at once (wlc_tools_done).
wlc_wait_ready() {
  local start=$SECONDS models='' ready=0 told=0
  local deadline=$((SECONDS + WLC_STARTUP_TIMEOUT_S)) progress=$((SECONDS + 60))
  wlc_now
  WLC_LOAD_START=$WLC_NOW
  wlc_log "waiting up to ${WLC_STARTUP_TIMEOUT_S}s for $WLC_BASE_URL/health and /v1/models to list $WLC_MODEL"
  while :; do
    if ! wlc_server_alive; then
      wlc_server_exit_code
      [ "$WLC_SERVER_RC" -ne 0 ] || WLC_SERVER_RC=1
      wlc_server_died
      wlc_log "the server exited (status $WLC_SERVER_RC) before it was ready; its last log lines:"
      wlc_server_log_tail
      return "$WLC_SERVER_RC"
    fi
    if [ "$ready" = 0 ] && curl -fsS -o /dev/null --max-time 10 "$WLC_BASE_URL/health" 2>/dev/null &&
      models=$(curl -fsS --max-time 10 "$WLC_BASE_URL/v1/models" 2>/dev/null) &&
      wlc_lists_model "$models" && wlc_answered_by_server; then
      wlc_port_alone || return "$WLC_EXIT_PORT"
      wlc_log "server ready after $((SECONDS - start))s"
      wlc_provenance_ready
      ready=1
    fi
    if wlc_tools_done; then
      [ "$ready" = 0 ] || return 0
    elif [ "$ready" = 1 ] && [ "$told" = 0 ]; then
      wlc_log "waiting for the client tools' install (log: $WLC_RESULTS_DIR/tools.log)"
      told=1
    fi
    if [ "$ready" = 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
      wlc_log "the server was not ready within ${WLC_STARTUP_TIMEOUT_S}s (last /v1/models: ${models:-none}); its last log lines:"
      wlc_server_log_tail
      return 124
    fi
    if [ "$SECONDS" -ge "$progress" ]; then
      wlc_log "still waiting for the $(if [ "$ready" = 0 ]; then echo server; else echo "client tools' install"; fi) ($((SECONDS - start))s)"
      progress=$((SECONDS + 60))
    fi
    sleep "$WLC_POLL_S"
  done
}

# wlc_answered_by_server: the server that answered the readiness poll is
# this job's (wlc_server_listens), else says once that another one
# answers and keeps waiting: this job's server, still loading, would bind
# the port beside it (vLLM's SO_REUSEPORT) or fail to.
wlc_answered_by_server() {
  wlc_server_listens && return 0
  if [ "$WLC_FOREIGN_TOLD" = 0 ]; then
    wlc_log "a server that is not this job's answers on port $WLC_PORT (its own still loads): not taking it for this job's; waiting"
    WLC_FOREIGN_TOLD=1
  fi
  return 1
}

# wlc_step LABEL CMD...: runs one step. A failed step records its status
# (the first one becomes the script's exit status) and the next steps still
# run, so one bad benchmark does not waste a loaded server. Once the server
# is gone, the remaining steps are skipped.
wlc_step() {
  local label=$1 rc=0
  shift
  if [ "$WLC_SERVER_GONE" = 0 ] && ! wlc_server_alive; then
    wlc_server_gone
  fi
  if [ "$WLC_SERVER_GONE" = 0 ] && ! wlc_port_alone; then
    WLC_SERVER_GONE=shared
    [ "$WLC_STATUS" -ne 0 ] || WLC_STATUS=$WLC_EXIT_PORT
  fi
  local why=''
  case $WLC_SERVER_GONE in
    1) why="the server is gone" ;;
    shared) why="port $WLC_PORT is shared with another server" ;;
  esac
  if [ -n "$why" ]; then
    wlc_log "skipped $label: $why"
    WLC_FAILED+=("$label(skipped)")
    WLC_STEP_RC=125
    return 0
  fi
  wlc_log "start $label"
  wlc_now
  local t0=$WLC_NOW
  "$@" || rc=$?
  wlc_step_record "$label" "$t0" "$rc" "$@"
  WLC_STEP_RC=$rc
  if [ "$rc" -eq 0 ]; then
    wlc_log "done $label"
    return 0
  fi
  wlc_log "FAILED $label (exit $rc)"
  WLC_FAILED+=("$label")
  [ "$WLC_STATUS" -ne 0 ] || WLC_STATUS=$rc
  [ "$WLC_SERVER_GONE" != 0 ] || wlc_server_alive || wlc_server_gone
}

# wlc_server_gone: the server died while the job still needed it.
wlc_server_gone() {
  WLC_SERVER_GONE=1
  wlc_server_exit_code
  [ "$WLC_SERVER_RC" -ne 0 ] || WLC_SERVER_RC=1
  wlc_server_died
  [ "$WLC_STATUS" -ne 0 ] || WLC_STATUS=$WLC_SERVER_RC
  wlc_log "the server exited (status $WLC_SERVER_RC); its last log lines:"
  wlc_server_log_tail
}

# wlc_bench RUN PROMPTS RESULT FILE... -- ARG...: runs `vllm bench serve
# ARG...` once per FILE (see wlc_bench_runs).
wlc_bench() { wlc_bench_runs wlc_vllm_bench_once "$@"; }

# wlc_vllm_bench_once FILE PROMPTS ARG...: one `vllm bench serve` repetition into
# FILE, copied into the results directory and checked (results.py check:
# every prompt completed, none failed unless WLC_ALLOW_FAILED, the run's
# allow_failed_requests reason, is set for the step; output tokens and
# every metric the dashboards need).
wlc_vllm_bench_once() {
  local f=$1 prompts=$2
  shift 2
  wlc_client vllm bench serve "$@" \
    --base-url "$WLC_BASE_URL" \
    --save-result \
    --result-dir "$WLC_BENCH_DIR" \
    --result-filename "$f" || return
  wlc_fetch_result "$f" || return
  wlc_in_server python3 -c "$WLC_RESULTS_PY" check "$WLC_BENCH_DIR/$f" "$prompts" ${WLC_ALLOW_FAILED:+"$WLC_ALLOW_FAILED"}
}

# wlc_bench_runs ONCE RUN PROMPTS RESULT FILE... -- ARG...: runs the
# benchmark client once per FILE (one repetition each: ONCE FILE PROMPTS
# ARG...) where the server runs; with more than one FILE, writes their
# median into RESULT. The median runs where the server runs because that is
# where python3 is guaranteed (the GPU host may have only bash, curl and
# docker).
wlc_bench_runs() {
  local once=$1 run=$2 prompts=$3 result=$4 files=() f
  shift 4
  while [ "$1" != -- ]; do
    files+=("$1")
    shift
  done
  shift
  wlc_in_server mkdir -p "$WLC_BENCH_DIR" || return
  for f in "${files[@]}"; do
    wlc_log "bench $run -> $f"
    "$once" "$f" "$prompts" "$@" || return
  done
  if [ "${#files[@]}" -gt 1 ]; then
    wlc_in_server python3 -c "$WLC_RESULTS_PY" median "$WLC_BENCH_DIR/$result" "${files[@]/#/$WLC_BENCH_DIR/}" || return
    wlc_fetch_result "$result" || return
  fi
}

# wlc_ingest KIND NAME [WRAP...] -- perf|eval ARG...: after a step that
# passed, builds its dashboard rows with the ingest tool ($WLC_INGEST_PY,
# run through WRAP, e.g. wlc_in_server, where python3 is), which checks
# each against the row shapes; keeps each row as a file under
# $WLC_RESULTS_DIR/ingest/KIND/ and POSTs it (wlc_ingest_send). Best
# effort, as perf-eval's ingest: each problem is one line, no result file
# is touched and the job's exit status never changes.
wlc_ingest() {
  local kind=$1 name=$2 wrap=() dir rows line n=0 files=()
  shift 2
  while [ "$1" != -- ]; do
    wrap+=("$1")
    shift
  done
  shift
  if [ "$WLC_STEP_RC" -ne 0 ]; then
    wlc_log "ingest: no $kind rows for $name: its step did not pass"
    return 0
  fi
  [ "$kind" != eval ] || [ -n "${INGEST_NO_SAMPLES:-}" ] || set -- "$@" samples
  dir=$WLC_RESULTS_DIR/ingest/$kind
  rows=$dir/.$name.rows
  mkdir -p "$dir" || return 0
  "${wrap[@]}" env NIGHTLY="${NIGHTLY:-}" WLC_JOB_HASH="${WLC_JOB_HASH:-}" \
    BUILDKITE_BUILD_ID="${BUILDKITE_BUILD_ID:-}" BUILDKITE_BUILD_NUMBER="${BUILDKITE_BUILD_NUMBER:-}" \
    BUILDKITE_BUILD_URL="${BUILDKITE_BUILD_URL:-}" BUILDKITE_BRANCH="${BUILDKITE_BRANCH:-}" \
    WLC_SWEEP_DIR="${WLC_SWEEP_DIR:-}" \
    BUILDKITE_COMMIT="${BUILDKITE_COMMIT:-}" BUILDKITE_PIPELINE_SLUG="${BUILDKITE_PIPELINE_SLUG:-}" \
    python3 -c "$WLC_INGEST_PY" "$1" "$WLC_INGEST_SHAPES" "${@:2}" >"$rows" 2>"$rows.err" || true
  while IFS= read -r line; do
    wlc_log "ingest: $line"
  done <"$rows.err"
  while IFS= read -r line || [ -n "$line" ]; do
    [ -n "$line" ] || continue
    n=$((n + 1))
    files+=("$dir/$(printf '%s-%03d.json' "$name" "$n")")
    printf '%s\n' "$line" >"${files[-1]}"
  done <"$rows"
  rm -f "$rows" "$rows.err"
  if [ "$n" -eq 0 ]; then
    wlc_log "ingest: no $kind rows for $name"
    return 0
  fi
  wlc_ingest_send "$kind" "$name" "${files[@]}"
}

# wlc_ingest_send KIND NAME FILE...: POSTs each row FILE to the KIND
# dashboard with the bearer token (read from stdin by curl, so it never
# appears in a process list). One line says what was sent or why not.
wlc_ingest_send() {
  local kind=$1 name=$2 url token code f sent=0 extra=() why=''
  shift 2
  if [ "$kind" = perf ]; then
    url=${PERF_INGEST_URL:-$WLC_PERF_INGEST_DEFAULT}
    extra=(-H "X-Source: $WLC_PERF_SOURCE")
  else
    url=${INGEST_URL:-$WLC_EVAL_INGEST_DEFAULT}
  fi
  read -r token <<<"$WLC_INGEST_TOKEN" || true
  if [ -z "$WLC_INGEST_HEADER" ] && [ -z "$token" ]; then
    wlc_log "ingest: INGEST_BEARER_TOKEN is empty: $# $kind row(s) of $name kept in ${1%/*}, not sent (send them with: wlc ingest $WLC_RESULTS_DIR)"
    return 0
  fi
  # The header comes from the handoff's file, else (the fallback) on stdin.
  local auth=@-
  [ -z "$WLC_INGEST_HEADER" ] || auth=@$WLC_INGEST_HEADER
  for f in "$@"; do
    code=$({ [ -n "$WLC_INGEST_HEADER" ] || printf 'Authorization: Bearer %s\n' "$token"; } |
      curl -sS -o "$f.response" -w '%{http_code}' --max-time "$WLC_INGEST_TIMEOUT_S" -X POST \
        -H "$auth" -H 'Content-Type: application/json' "${extra[@]}" --data-binary "@$f" "$url" 2>"$f.curl") || code=000
    if [ "$code" -ge 200 ] && [ "$code" -lt 300 ]; then
      sent=$((sent + 1))
    elif [ -z "$why" ]; then
      if [ "$code" = 000 ]; then
        why="$(head -c 300 "$f.curl" | tr '\n' ' ')"
      else
        why="HTTP $code: $(head -c 300 "$f.response" | tr '\n' ' ')"
      fi
    fi
    rm -f "$f.response" "$f.curl"
  done
  if [ "$sent" -eq "$#" ]; then
    wlc_log "ingest: sent $sent $kind row(s) of $name to $url"
  else
    wlc_log "ingest: sent $sent of $# $kind row(s) of $name to $url; the first failure: ${why% }; all are kept in ${1%/*} (resend: wlc ingest $WLC_RESULTS_DIR)"
  fi
}

# wlc_tools_start: checks the client tools where the clients will run (the
# runtime's wlc_beside_server) and installs the missing ones into their own
# virtual environment, $WLC_TOOLS_VENV (tools.sh), in the background while
# the server loads: the install costs the GPUs no time unless it outlasts
# the load, and the server's Python is never written. Its output goes to
# tools.log; wlc_wait_ready waits for it.
wlc_tools_start() {
  local i names=()
  for ((i = 0; i < ${#WLC_TOOLS[@]}; i += 4)); do names+=("${WLC_TOOLS[i]}"); done
  wlc_log "checking the client tools (${names[*]}) while the server loads; missing ones go into $WLC_TOOLS_VENV (log: $WLC_RESULTS_DIR/tools.log)"
  WLC_TOOLS_START=$SECONDS
  wlc_now
  WLC_TOOLS_BEGAN=$WLC_NOW
  wlc_beside_server bash -c "$WLC_TOOLS_SH" wlc-tools "$WLC_TOOLS_VENV" "${WLC_TOOLS[@]}" \
    </dev/null >"$WLC_RESULTS_DIR/tools.log" 2>&1 &
  WLC_TOOLS_PID=$!
}

# wlc_tools_done: status 0 once the tools' install succeeded (or when none
# runs), 1 while it runs. When it failed, the job ends here with its status,
# the install's log in the job's (the EXIT trap stops the server).
wlc_tools_done() {
  local rc=0
  [ -n "$WLC_TOOLS_PID" ] || return 0
  ! kill -0 "$WLC_TOOLS_PID" 2>/dev/null || return 1
  wait "$WLC_TOOLS_PID" || rc=$?
  WLC_TOOLS_PID=''
  if [ "$rc" -ne 0 ]; then
    sed 's/^/  tools | /' "$WLC_RESULTS_DIR/tools.log" >&2 || true
    wlc_log "the client tools' install failed (status $rc, $(grep -o 'missing: .*' "$WLC_RESULTS_DIR/tools.log" | tail -n 1)) after $((SECONDS - WLC_TOOLS_START))s; stopping the server"
    exit "$rc"
  fi
  wlc_log "client tools ready after $((SECONDS - WLC_TOOLS_START))s"
  wlc_phase tools "$WLC_TOOLS_BEGAN"
}

# WLC_VENV_SH runs a client with the workload's environment (ASSIGNMENT...,
# WLC_ENV) and the tools' virtual environment first, as its activate script
# would (PATH, VIRTUAL_ENV), with its site-packages ahead of a PYTHONPATH,
# so a version a tool pinned wins for the clients:
#   bash -c "$WLC_VENV_SH" wlc-venv VENV ASSIGNMENT... -- CMD...
# The wrapper itself runs in the job's environment: it reads the
# workload's only as these words, never as its own variables.
WLC_VENV_SH='v=$1
shift
a=() p=$PATH pp=${PYTHONPATH:-}
while [ "$1" != -- ]; do
  case $1 in
    PATH=*) p=${1#PATH=} ;;
    PYTHONPATH=*) pp=${1#PYTHONPATH=} ;;
  esac
  a+=("$1")
  shift
done
shift
case $v in /*) ;; *) v=$PWD/$v ;; esac
if [ -x "$v/bin/python3" ]; then
  if [ -n "$pp" ]; then
    for s in "$v"/lib/python3*/site-packages; do pp=$s:$pp; done
    a+=("PYTHONPATH=$pp")
  fi
  a+=("PATH=$v/bin:$p" "VIRTUAL_ENV=$v")
fi
exec env "${a[@]}" "$@"'

# wlc_client CMD...: CMD where the clients run (wlc_in_server) with the
# workload's environment, WLC_ENV: a client (vllm bench, lm_eval, a custom
# step) sees what the server sees; the job's own tools run without it.
wlc_client() { wlc_in_server env "${WLC_ENV[@]}" "$@"; }

# wlc_in_tools CMD...: CMD as a client (wlc_client), with the client tools'
# virtual environment when the job has one.
wlc_in_tools() {
  if [ -z "$WLC_TOOLS_VENV" ]; then
    wlc_client "$@"
  else
    wlc_in_server bash -c "$WLC_VENV_SH" wlc-venv "$WLC_TOOLS_VENV" "${WLC_ENV[@]}" -- "$@"
  fi
}

# wlc_preflight OPTION...: before the server starts, the image's engine
# must know every OPTION the job passes it (preflight.sh, where the server
# will run: the runtime's wlc_beside_server); a flag it lacks ends the job
# in seconds, naming the flag and the engine's version.
wlc_preflight() {
  local rc=0
  wlc_beside_server bash -c "$WLC_PREFLIGHT_SH" wlc-preflight "$WLC_ENGINE" "${WLC_ENV[@]}" "$@" </dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then
    wlc_log "preflight failed (status $rc, see above); the server was not started"
    exit "$rc"
  fi
}

# wlc_eval DIR... -- CMD...: runs CMD where the server runs (with the
# client tools' virtual environment: wlc_in_tools), then brings
# each results directory DIR back (also after a failure: partial output
# helps), and returns CMD's status.
wlc_eval() {
  local dirs=() d rc=0
  while [ "$1" != -- ]; do
    dirs+=("$1")
    shift
  done
  shift
  wlc_in_tools "$@" || rc=$?
  for d in "${dirs[@]}"; do
    wlc_fetch_dir "$d" || [ "$rc" -ne 0 ] || rc=$?
  done
  return "$rc"
}

# wlc_show_log: copies the server log to this job's stderr, each line
# prefixed, so it reads apart from wlc's own lines.
wlc_show_log() {
  local line
  while IFS= read -r line; do
    printf '[server] %s\n' "$line" >&2
  done
}

wlc_stop_follower() {
  if [ -n "$WLC_FOLLOWER_PID" ]; then
    kill "$WLC_FOLLOWER_PID" 2>/dev/null || true
    wait "$WLC_FOLLOWER_PID" 2>/dev/null || true
    WLC_FOLLOWER_PID=''
  fi
}

# wlc_below PID: the processes below PID, each after those below it
# (Linux lists each process's children in /proc).
wlc_below() {
  local kids=() c
  read -ra kids <<<"$(cat /proc/"$1"/task/*/children 2>/dev/null | tr '\n' ' ')" || true
  for c in "${kids[@]}"; do
    wlc_below "$c"
    printf '%s\n' "$c"
  done
}

# wlc_kill_tree PID: TERM to every process below PID, then to PID, so an
# install still running when the job ends (the server died) takes its pip
# with it; then waits, up to 2 seconds (a cancelled job's 10 s grace
# also covers the server's stop), until those below PID are gone (PID is
# the caller's to wait for). A process TERM
# does not end at once, srun handing the signal to its step's tasks on
# Slurm or pip finishing a write, still writes into the directory the
# caller removes next: the removal failed ("Directory not empty") and
# took the job's exit status with it.
wlc_kill_tree() {
  local below=() p i alive
  mapfile -t below < <(wlc_below "$1")
  for p in "${below[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$1" 2>/dev/null || true
  for ((i = 0; i < 20; i++)); do
    alive=0
    for p in "${below[@]}"; do
      if kill -0 "$p" 2>/dev/null; then
        alive=1
        break
      fi
    done
    [ "$alive" = 1 ] || return 0
    sleep 0.1
  done
  wlc_log "processes of the tools' install still run 2s after TERM: ${below[*]}"
}

# wlc_remove DIR: removes a directory the job made. It never fails: the
# job's status is what it ran, not its cleanup (a process it could not
# stop may still hold the directory; that is told).
wlc_remove() {
  rm -rf -- "$1" 2>/dev/null && return 0
  sleep 1
  rm -rf -- "$1" 2>/dev/null && return 0
  wlc_log "could not remove $1: $(rm -rf -- "$1" 2>&1 | head -n 1)" || true
}

# wlc_on_exit (the EXIT trap): stops the server and the log follower, then
# exits with the first failure's status, classified (wlc_exit_status).
wlc_on_exit() {
  local rc=$?
  trap '' INT TERM
  trap - EXIT
  wlc_now
  local t0=$WLC_NOW
  wlc_server_stop || true
  wlc_stop_follower
  if [ -n "$WLC_TOOLS_PID" ]; then
    wlc_kill_tree "$WLC_TOOLS_PID"
    wait "$WLC_TOOLS_PID" 2>/dev/null || true
  fi
  [ "$WLC_TOOLS_OWN" = 0 ] || wlc_remove "$WLC_TOOLS_VENV"
  wlc_token_forget
  [ "$rc" -ne 0 ] || rc=$WLC_STATUS
  if [ "${#WLC_FAILED[@]}" -gt 0 ]; then
    wlc_log "failed: ${WLC_FAILED[*]}"
  fi
  wlc_phase teardown "$t0"
  wlc_exit_status "$rc"
  wlc_provenance_write "$WLC_EXIT" || true
  wlc_log "exit $WLC_EXIT; results in $WLC_RESULTS_DIR"
  wlc_requeue
  exit "$WLC_EXIT"
}
