# ---- SGLang client (backends/runner/sglang.sh, in every SGLang job script) ----

# wlc_sglang_bench RUN PROMPTS RESULT FILE... -- ARG...: runs `python3 -m
# sglang.bench_serving ARG...` once per FILE (see wlc_bench_runs).
wlc_sglang_bench() { wlc_bench_runs wlc_sglang_bench_once "$@"; }

# wlc_sglang_bench_once FILE PROMPTS ARG...: one bench_serving repetition.
# bench_serving appends one JSON row per run to its --output-file; the raw
# JSONL is kept beside FILE (FILE with .jsonl), and its last row is written
# to FILE and checked as wlc_vllm_bench_once's (every prompt completed, as
# perf-eval's run_sglang_bench did, and more).
wlc_sglang_bench_once() {
  local f=$1 prompts=$2 raw=${1%.json}.jsonl
  shift 2
  wlc_in_server rm -f "$WLC_BENCH_DIR/$raw" || return
  wlc_client python3 -m sglang.bench_serving "$@" \
    --base-url "$WLC_BASE_URL" \
    --output-file "$WLC_BENCH_DIR/$raw" || return
  wlc_in_server python3 -c "$WLC_RESULTS_PY" last-row "$WLC_BENCH_DIR/$raw" "$WLC_BENCH_DIR/$f" "$prompts" ${WLC_ALLOW_FAILED:+"$WLC_ALLOW_FAILED"} || return
  wlc_fetch_result "$raw" || return
  wlc_fetch_result "$f"
}
