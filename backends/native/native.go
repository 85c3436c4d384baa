// Package native is the native runner: per workload one bash script that
// starts `vllm serve` as a child process of the script, the way a
// Kubernetes pod running the vLLM image runs a workload (the image has
// vllm, python3 and the GPUs; nothing else). The shared script machinery
// is backends/runner; this package supplies the process runtime.
package native

import (
	"strings"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// Backend is the native backend.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return "native" }

// Summary implements backends.Backend.
func (Backend) Summary() string {
	return "one bash script per workload: vllm serve as a child process (a pod with the vLLM image)"
}

// Lower implements backends.Backend: <name>.sh per workload, mode 0755.
func (Backend) Lower(ws []plan.Workload, _ backends.Options) ([]backends.Artifact, error) {
	return runner.Lower(ws, Script)
}

// Script renders one workload's native job script.
func Script(w plan.Workload) ([]byte, error) {
	return runner.SingleNode(w, "native", oneNode, Runtime)
}

// Split is w's script as the workload's part and the shared runtime
// (runner.Split), which Buildkite steps download once for many workloads.
func (Backend) Split(w plan.Workload, runtimeDir string) (runner.Split, error) {
	return runner.SingleNodeSplit(w, "native", oneNode, Runtime, runtimeDir)
}

// oneNode is why a multi-node workload is refused.
const oneNode = "the native runner starts one server process"

// Runtime is the process runtime for w.
func Runtime(w plan.Workload) (runner.Runtime, error) {
	var g strings.Builder
	where := "vllm"
	if w.Engine == schema.EngineSGLang {
		where = "sglang"
	}
	if len(w.Secrets) > 0 {
		g.WriteString("# Secrets are inherited from the job's environment by name: " + strings.Join(w.Secrets, ", ") + ".\n")
	}
	g.WriteString("WLC_SERVER_PID=''\nWLC_SERVER_WAITED=0\n")

	cmd, err := runner.Words(w.Serve.Command, runner.NoVars)
	if err != nil {
		return runner.Runtime{}, err
	}
	// The workload's environment is the server's alone (and its clients',
	// wlc_client): never this shell's.
	serve, err := runner.Command(`setsid env "${WLC_ENV[@]}" `+strings.Join(cmd, " "), w.Serve.Args, runner.NoVars, "    ")
	if err != nil {
		return runner.Runtime{}, err
	}
	name := strings.Join(w.Serve.Command, " ")
	tools := []string{"vllm", "python3", "setsid"}
	if w.Engine == schema.EngineSGLang {
		tools = []string{"python3", "setsid"} // sglang is a python3 module
	}
	if w.Job != nil {
		tools = nil // the job brings its own
	}
	reset := ""
	if x := runner.ServeExtra(w); x != nil {
		serve += " \\\n    " + strings.Join(x, " ")
		// A sweep starts a server per backend: forget the last one's status.
		reset = "  WLC_SERVER_WAITED=0\n"
	}
	desc := "It runs where " + where + " is installed (a pod with the " + w.Platform + " " + runner.EngineName(w) + " image): `" + name + "` is a\n" +
		"child process in its own process group, logging to results/; everything else runs beside it. The\n" +
		"preflight checks the image's " + runner.EngineName(w) + " for every server option first; client tools the image lacks\n" +
		"are pip-installed into their own virtual environment while the server loads."
	if w.Job != nil {
		desc = "It runs on the machine (or in the pod) that has the GPUs: the custom job runs here, no server."
	}
	return runner.Runtime{
		Backend: "native",
		Where:   desc,
		Tools:   tools,
		Globals: g.String(),
		Functions: "# wlc_server_start: starts " + name + " in its own session (setsid), so\n" +
			"# teardown can signal the server and every worker it forked at once.\n" +
			"wlc_server_start() {\n" + reset +
			"  wlc_log \"starting " + runner.Comment(name) + " (log: $WLC_SERVER_LOG)\"\n" +
			"  " + serve + " \\\n" +
			"    --host \"$WLC_HOST\" \\\n" +
			"    --port \"$WLC_PORT\" >>\"$WLC_SERVER_LOG\" 2>&1 </dev/null &\n" +
			"  WLC_SERVER_PID=$!\n" +
			"  tail -n +1 -f \"$WLC_SERVER_LOG\" > >(wlc_show_log) &\n" +
			"  WLC_FOLLOWER_PID=$!\n" +
			"}\n",
		Shared:    functions,
		Prepare:   "WLC_BENCH_DIR=$WLC_RESULTS_DIR\n",
		ToolsVenv: `"$PWD/.wlc-tools-${WLC_RUN_ID//[^A-Za-z0-9_.-]/-}"`,
		Job: "# wlc_job_run DIR CMD...: the custom job runs here, where the server\n" +
			"# would, with the GPUs this machine gives the job.\n" +
			"wlc_job_run() {\n" +
			"  mkdir -p \"$WLC_BENCH_DIR/$1\" || return\n" +
			"  shift\n" +
			"  wlc_log \"running the custom job\"\n" +
			"  \"$@\" </dev/null\n" +
			"}\n",
	}, nil
}

const functions = `
wlc_server_alive() { [ -n "$WLC_SERVER_PID" ] && kill -0 "$WLC_SERVER_PID" 2>/dev/null; }

wlc_server_exit_code() {
  if [ "$WLC_SERVER_WAITED" = 0 ]; then
    WLC_SERVER_RC=0
    wait "$WLC_SERVER_PID" 2>/dev/null || WLC_SERVER_RC=$?
    WLC_SERVER_WAITED=1
  fi
}

wlc_server_log_tail() { tail -n 80 "$WLC_SERVER_LOG" | sed 's/^/  | /' >&2 || true; }

# wlc_server_listens: a socket listening on the port belongs to the server's
# process group (its inode among the group's descriptors, from /proc), or
# none is visible here, or the server's descriptors cannot be read (a
# process that made itself non-dumpable): what cannot be told must not
# hold a ready server back until the startup timeout.
wlc_server_listens() {
  local held pids pid fds=''
  wlc_port_sockets
  [ "${#WLC_PORT_SOCKETS[@]}" -gt 0 ] || return 0
  [ -r "/proc/$WLC_SERVER_PID/fd" ] || return 0
  printf -v held '%s|' "${WLC_PORT_SOCKETS[@]}"
  held="socket:\[(${held%|})\]"
  # The server's first process holds it (vLLM's API server, SGLang's): the
  # rest of the group is read only when it does not.
  [[ $(ls -l "/proc/$WLC_SERVER_PID/fd" 2>/dev/null || true) =~ $held ]] && return 0
  # Processes come and go while /proc is read: a vanished one is no loss.
  pids=$({ cat /proc/[0-9]*/stat 2>/dev/null || true; } |
    awk -v g="$WLC_SERVER_PID" '{ s = $0; sub(/.*\) /, "", s); split(s, f, " "); if (f[3] == g) print $1 }')
  for pid in $pids; do
    fds+=$(ls -l "/proc/$pid/fd" 2>/dev/null || true)$'\n'
  done
  [[ $fds =~ $held ]]
}

wlc_in_server() { "$@"; }

wlc_beside_server() { "$@"; } # the clients run here too

# The clients write into the results directory themselves.
wlc_fetch_result() { :; }
wlc_fetch_dir() { :; }

# wlc_server_stop: TERM to the server's process group, KILL what is left
# after WLC_STOP_TIMEOUT_S.
wlc_server_stop() {
  [ -n "$WLC_SERVER_PID" ] || return 0
  local deadline=$((SECONDS + WLC_STOP_TIMEOUT_S))
  if kill -0 "$WLC_SERVER_PID" 2>/dev/null; then
    wlc_log "stopping the server (process group $WLC_SERVER_PID)"
    kill -TERM -- "-$WLC_SERVER_PID" 2>/dev/null || true
    # Polled often: the GPUs are held until the job exits.
    while kill -0 "$WLC_SERVER_PID" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
      sleep 0.05
    done
  fi
  kill -KILL -- "-$WLC_SERVER_PID" 2>/dev/null || true
  wlc_server_exit_code
}
`
