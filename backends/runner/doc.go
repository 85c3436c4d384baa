// Package runner renders the job scripts of the runner backends (docker,
// native, slurm): one self-contained bash script per workload that starts
// a vLLM server, waits until it serves the model, runs every benchmark and
// evaluation against it, and always tears it down. It is pure: plan in,
// shell text out.
//
// # Go API
//
// Quoting (every user value goes through these; mvdan.cc/sh's syntax.Quote):
//
//	Quote(s)                  one bash word expanding to s
//	Word(tok, vars)           an argv token; plan.BaseURL / plan.ResultsDir
//	                          become "${VAR}" (vars names the variables:
//	                          HostVars, ServerVars, NoVars), the rest quoted
//	Words(argv, vars)         Word for each token
//	Assign(name, value, vars) NAME=<quoted value>, for export and env
//	Group(words)              display lines: "--flag value" pairs together
//	Continued(lines, indent)  lines joined with " \" continuations
//	Command(head, argv, v, i) head, then argv grouped and continued
//	Comment(s)                s made safe inside a # comment
//
// Script pieces, in the order Script assembles them (split.go: head,
// shared runtime, tail):
//
//	Header(w, rt)    #! line and the comment: workload, model, hardware,
//	                 precision path, image and why, steps, variables
//	Preamble(w)      shellcheck directive, set -euo pipefail, and the
//	                 workload's variables (WLC_WORKLOAD, WLC_MODEL,
//	                 WLC_MODEL_JSON, WLC_STARTUP_TIMEOUT_S,
//	                 WLC_WORKLOAD_PORT, WLC_RESULTS_DIR) and WLC_ENV
//	                 (EnvArray: the workload's env, never exported)
//	shared runtime   lib.sh (the shared functions below), the exit
//	                 statuses (Exits) with outcome.sh, provenance.sh, the
//	                 result tool results.py as $WLC_RESULTS_PY, the
//	                 embedded tools w needs, the shapes' and engine's
//	                 libraries, Ingest, rt.Shared
//	the workload's provenance plan, tool list and engine
//	rt.Globals, rt.Functions, rt.Job   the runtime's part (see the contract)
//	Run(w, rt)       wlc_require, wlc_warn_unset, wlc_init, rt.Prepare,
//	                 wlc_server_start, wlc_wait_ready, Steps(w), exit
//	Steps(w)         one wlc_step per bench run (sweep-expanded, with its
//	                 repetition files), lm_eval task, and bfcl
//
// Script(w, rt) is the whole script; SplitScript(w, rt, dir) the same
// script as the workload's part, which sources the shared runtime from a
// file of its own (Buildkite steps); Skipped(w, backend, reason) is the
// script of a workload whose platform has no image in this build. A
// backend with a different shape (Slurm: per-node srun steps) can use
// Header, Preamble, Library and Steps with its own run section.
//
// # Shell contract
//
// lib.sh calls these functions, which a runtime defines (Runtime.Functions,
// and Runtime.Shared for those whose text no workload changes):
//
//	wlc_server_start      start the server in the background on $WLC_PORT
//	                      (clients reach it at $WLC_BASE_URL); copy its log
//	                      to $WLC_SERVER_LOG and set WLC_FOLLOWER_PID to a
//	                      process that shows the log (killed at teardown)
//	wlc_server_alive      status 0 while the server runs
//	wlc_server_exit_code  set WLC_SERVER_RC to the server's exit status
//	                      (only called once it stopped)
//	wlc_server_log_tail   print its last log lines to stderr
//	wlc_server_listens    status 0 unless a socket listening on $WLC_PORT
//	                      here is seen not to be the server's (readiness
//	                      is then another server's answer)
//	wlc_server_stop       stop it and everything it started; idempotent,
//	                      safe when it never started (the EXIT trap calls it)
//	wlc_in_server CMD...  run CMD where vllm and python3 are (docker exec,
//	                      srun into the head node's container, or directly),
//	                      in the job's own environment
//	wlc_fetch_result F    copy $WLC_BENCH_DIR/F to $WLC_RESULTS_DIR/F (no-op
//	                      when they are the same directory)
//
// Runtime.Prepare runs after wlc_init and must set WLC_BENCH_DIR (where
// `vllm bench serve` writes, as seen by wlc_in_server).
//
// lib.sh provides: wlc_log, wlc_require TOOL..., wlc_warn_unset NAME...,
// wlc_init (run id WLC_RUN_ID from WLC_RUN_ID / BUILDKITE_JOB_ID /
// SLURM_JOB_ID / pid-time; EXIT/INT/TERM traps; results dir; port;
// WLC_BASE_URL=http://$WLC_HOST:$WLC_PORT), wlc_pick_port, wlc_port_free,
// wlc_wait_ready, wlc_lists_model, wlc_step LABEL CMD..., wlc_bench RUN
// PROMPTS RESULT FILE... -- ARG..., wlc_client CMD... (wlc_in_server with
// the workload's env), wlc_show_log, wlc_stop_follower, wlc_on_exit.
// State: WLC_STATUS (first failure, the exit status), WLC_FAILED,
// WLC_SERVER_GONE.
//
// # Whose environment
//
// The workload's env is the server's and its clients': the runtime starts
// the server as `env "${WLC_ENV[@]}" CMD` (every node, role and router),
// and clients run through wlc_client or wlc_in_tools. Nothing else reads
// it: the script never exports it, so the job shell and the tools it runs
// for itself (curl, results.py and ingest.py, tools.sh's pip, the
// preflight's bash, provenance) see only the environment the job was
// started with, whatever names a workload sets. The dashboards' token is
// moved out of the script's environment before anything starts (lib.sh:
// a 0600 header file, the script re-executed without it) and read by the
// sender's curl alone.
//
// # Behaviour
//
// Port: WLC_PORT, else the workload's port (fails at once when taken),
// else cksum(run id) mapped into 20000-32767 and the next free one (a
// connect probe), each claimed first (an flock under WLC_PORT_LOCKS,
// /tmp/wlc-ports, held as long as the job or its server lives), so two
// jobs on one host never pick one port, even before either server binds
// it.
//
// Readiness: /health, then /v1/models listing exactly the model (its JSON
// string, so a longer name does not match), polled every WLC_POLL_S (5)
// seconds for startup_timeout_s; a dead server ends the wait at once with
// its exit status and last log lines; a timeout exits 124. vLLM binds with
// SO_REUSEPORT, so another server can share the port: at readiness and
// before each step, a second socket listening on it ends the job (95).
//
// Steps: each runs through wlc_step. A failure records its status (the
// first one is the script's exit status) and the next steps still run on
// the loaded server; once the server is gone the rest is skipped. A bench
// run fails unless every prompt completed and none failed.
//
// Median: each repetition is kept as its own file; results.py writes the
// median of every numeric field into the run's result file (odd
// repetitions, so the median is a real run; identity fields must agree,
// as perf-eval's aggregator). It runs where vllm runs (wlc_in_server),
// because python3 is guaranteed there and not on a docker host.
//
// Teardown: the EXIT trap (INT and TERM exit 130/143 through it) stops
// the server, kills the log follower and exits with the first failure,
// classified (outcome.sh): an infrastructure failure (a failed image pull,
// no GPU, out of memory while loading, NCCL, a server the system killed:
// its log says which; a shared port) exits with its own status (Exits:
// 90-95), which the Buildkite steps retry; any other is the workload's,
// never retried.
package runner
