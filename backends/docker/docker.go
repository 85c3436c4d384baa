// Package docker is the docker backend: per workload one bash script that
// runs the vLLM image with `docker run` on a GPU host (the agent's own
// host), waits until it serves the model, runs the benchmarks and
// evaluations against it and always removes the container. The shared
// script machinery is backends/runner; this package supplies the docker
// runtime functions.
package docker

import (
	"fmt"
	"strings"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// Backend is the docker backend.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return "docker" }

// Summary implements backends.Backend.
func (Backend) Summary() string {
	return "one bash script per workload: docker run on the GPU host, benchmarks, teardown"
}

// Lower implements backends.Backend: <name>.sh per workload, mode 0755.
func (Backend) Lower(ws []plan.Workload, _ backends.Options) ([]backends.Artifact, error) {
	return runner.Lower(ws, Script)
}

// Script renders one workload's docker job script.
func Script(w plan.Workload) ([]byte, error) {
	return runner.SingleNode(w, "docker", oneNode, Runtime)
}

// Split is w's script as the workload's part and the shared runtime
// (runner.Split), which Buildkite steps download once for many workloads.
func (Backend) Split(w plan.Workload, runtimeDir string) (runner.Split, error) {
	return runner.SingleNodeSplit(w, "docker", oneNode, Runtime, runtimeDir)
}

// oneNode is why a multi-node workload is refused.
const oneNode = "a docker host runs one node"

// hostDefaults apply when the profile is not a docker profile (e.g. a k8s
// workload run on a docker host by hand): the schema's #DockerHost defaults.
var hostDefaults = schema.DockerHost{AlwaysPull: true, ShmSize: "32g"}

// Runtime is the docker runtime for w.
func Runtime(w plan.Workload) (runner.Runtime, error) {
	host := hostDefaults
	if w.Profile.Docker != nil {
		host = *w.Profile.Docker
	}
	img, err := runner.Quote(w.Image.Pull)
	if err != nil {
		return runner.Runtime{}, err
	}
	job, err := jobFunction(w, host)
	if err != nil {
		return runner.Runtime{}, err
	}
	start, err := runCommand(w, host)
	if err != nil {
		return runner.Runtime{}, err
	}
	bench := "vllm bench"
	if w.Engine == schema.EngineSGLang {
		bench = "sglang.bench_serving"
	}
	// The name is checked (plan.CheckName) and quoted anyway.
	cname, err := runner.Quote("wlc-" + w.Name + "-")
	if err != nil {
		return runner.Runtime{}, err
	}
	prepare := "WLC_CONTAINER=" + cname + "${WLC_RUN_ID//[^A-Za-z0-9_.-]/-}\n" +
		"WLC_BENCH_DIR=${WLC_BENCH_DIR:-/tmp/$WLC_CONTAINER} # inside the container\n"
	if host.AlwaysPull {
		prepare += "wlc_log \"pulling $WLC_IMAGE\"\nwlc_docker pull \"$WLC_IMAGE\"\n"
	}
	env := [][2]string{{"WLC_BENCH_DIR", "where " + bench + " writes inside the container (default /tmp/<container>)"}}
	if w.Platform == "cuda" {
		env = append(env, [2]string{"WLC_GPUS", "docker --gpus value (default " + gpusDefault(w) + ")"})
	}
	return runner.Runtime{
		Backend: "docker",
		Where:   where(w),
		Tools:   []string{"docker"},
		Env:     env,
		Globals: "WLC_IMAGE=" + img + "\nWLC_CONTAINER=''\nWLC_STARTED=0\n",
		Functions: "# wlc_server_start: runs the image detached, published on localhost only.\n" +
			"wlc_server_start() {\n" +
			"  WLC_STARTED=1\n" +
			"  wlc_log \"starting container $WLC_CONTAINER\"\n" +
			"  " + start + " >/dev/null\n" +
			"  docker logs -f \"$WLC_CONTAINER\" > >(tee -a \"$WLC_SERVER_LOG\" | wlc_show_log) 2>&1 &\n" +
			"  WLC_FOLLOWER_PID=$!\n" +
			"}\n",
		Shared:           functions,
		Prepare:          prepare,
		PreflightAtStart: true,
		ToolsVenv:        `"/tmp/$WLC_CONTAINER-tools"`,
		ToolsVenvKept:    true, // it goes with the container
		Job:              job,
	}, nil
}

func where(w plan.Workload) string {
	if j := w.Job; j != nil {
		if j.Where == "host" {
			return "It runs on a " + w.Platform + " docker host: the custom job runs on the host itself, no container\n" +
				"is started."
		}
		return "It runs on a " + w.Platform + " docker host: `docker run` runs the custom job in the image with the\n" +
			"GPUs (no server); its results are copied out and the container is always removed."
	}
	server := "`vllm serve`"
	if w.Engine == schema.EngineSGLang {
		server = "`python3 -m sglang.launch_server`"
	}
	start := "`docker run -d` starts the image, whose first step checks that its " + runner.EngineName(w) + " has every server\n" +
		"option (the preflight), then runs " + server
	if len(w.Tools) > 0 {
		start += "; client tools the image lacks are pip-installed into\n" +
			"their own virtual environment in the container while the server loads"
	}
	return "It runs on a " + w.Platform + " docker host: " + start + "; every client (the\n" +
		"benchmark, the median, lm_eval, bfcl) runs inside the container (docker exec), and the container\n" +
		"is always removed."
}

// functions are the docker runtime's contract functions besides start.
const functions = `
wlc_server_alive() {
  [ "$(docker inspect -f '{{.State.Running}}' "$WLC_CONTAINER" 2>/dev/null)" = true ]
}

wlc_server_exit_code() {
  WLC_SERVER_RC=$(docker inspect -f '{{.State.ExitCode}}' "$WLC_CONTAINER" 2>/dev/null) || WLC_SERVER_RC=1
}

wlc_server_log_tail() {
  docker logs --tail 80 "$WLC_CONTAINER" 2>&1 | sed 's/^/  | /' >&2 || true
}

# wlc_server_listens: docker publishes the port itself and refuses one that
# is taken, so what answers on it is the container.
wlc_server_listens() { :; }

# wlc_in_server CMD...: runs CMD in the container, where vllm and python3 are.
wlc_in_server() { docker exec "$WLC_CONTAINER" "$@"; }
wlc_beside_server() { docker exec "$WLC_CONTAINER" "$@"; }

# wlc_fetch_result FILE and wlc_fetch_dir DIR: copy results out of the
# container; docker cp writes them as this user, so the CI agent can clean
# them up. DIR/. copies the directory's content into the existing one.
wlc_fetch_result() { docker cp "$WLC_CONTAINER:$WLC_BENCH_DIR/$1" "$WLC_RESULTS_DIR/$1"; }
wlc_fetch_dir() { mkdir -p "$WLC_RESULTS_DIR/$1" && docker cp "$WLC_CONTAINER:$WLC_BENCH_DIR/$1/." "$WLC_RESULTS_DIR/$1"; }

wlc_server_stop() {
  [ "$WLC_STARTED" = 1 ] || return 0
  wlc_log "stopping and removing container $WLC_CONTAINER"
  docker stop -t "$WLC_STOP_TIMEOUT_S" "$WLC_CONTAINER" >/dev/null 2>&1 || true
  docker rm -f "$WLC_CONTAINER" >/dev/null 2>&1 || true
}
`

func gpusDefault(w plan.Workload) string {
	if w.GPUsPerNode >= w.Hardware.GPUsPerNode {
		return "all"
	}
	return fmt.Sprint(w.GPUsPerNode)
}

// containerFlags are the docker run flags every container of w gets, in
// a fixed order: name and label, devices for the vendor, IPC and limits,
// the port (when port), mounts, secrets by name.
func containerFlags(w plan.Workload, host schema.DockerHost, port bool) ([][]string, error) {
	var lines [][]string
	var err error
	add := func(ws ...string) { lines = append(lines, ws) }
	// addq adds a flag and its value, quoted.
	addq := func(flag, value string) {
		v, e := runner.Quote(value)
		if e != nil && err == nil {
			err = e
		}
		add(flag, v)
	}
	add("--name", `"$WLC_CONTAINER"`)
	addq("--label", "wlc.workload="+w.Name)
	switch w.Platform {
	case "rocm":
		// vLLM's ROCm image: the kernel driver and render nodes, the video
		// group, no seccomp filter (ROCm needs syscalls it blocks), and a
		// large /dev/shm instead of the host IPC namespace.
		add("--device", "/dev/kfd")
		add("--device", "/dev/dri")
		add("--group-add", "video")
		add("--cap-add", "SYS_PTRACE")
		add("--security-opt", "seccomp=unconfined")
		addq("--shm-size", host.ShmSize)
	case "xpu":
		add("--device", "/dev/dri")
		addq("--shm-size", host.ShmSize)
	default:
		// NVIDIA: GPUs through the container toolkit, the host IPC
		// namespace for PyTorch's shared memory, unlimited pinned memory.
		add("--gpus", `"${WLC_GPUS:-`+gpusDefault(w)+`}"`)
		add("--ipc=host")
		add("--ulimit", "memlock=-1")
		add("--ulimit", "stack=67108864")
	}
	add("--ulimit", "nofile=65536:65536")
	if port {
		add("-p", `"127.0.0.1:$WLC_PORT:$WLC_PORT"`)
	}
	if hf := hfHome(w); hf != "" {
		addq("-v", hf+":"+hf)
	} else {
		add("-v", `"$HOME/.cache/huggingface:/root/.cache/huggingface"`)
	}
	for _, v := range host.Volumes {
		addq("-v", v)
	}
	// The workload's env is not the container's: docker exec would give it
	// to the job's own tools in there too (the preflight, the result and
	// ingest tools, pip). The server and the clients get it as arguments
	// (WLC_ENV: the preflight's, wlc_client).
	for _, s := range w.Secrets {
		addq("-e", s)
	}
	return lines, err
}

// jobFunction defines wlc_job_run for a custom job: the image run attached
// with the flags the server's container would get (no port), in the job's
// working directory, bash as the entrypoint making DIR first. The container stays until teardown, so
// wlc_fetch_dir can copy DIR out of it.
func jobFunction(w plan.Workload, host schema.DockerHost) (string, error) {
	if w.Job == nil || w.Job.Where == "host" {
		return "", nil
	}
	flags, err := containerFlags(w, host, false)
	if err != nil {
		return "", err
	}
	lines := append([][]string{{"docker", "run"}}, flags...)
	// The job's own files (its script) are in the job's working directory,
	// which the container sees at the same path and starts in.
	lines = append(lines, []string{"-v", `"$PWD:$PWD"`, "-w", `"$PWD"`})
	lines = append(lines, []string{"--entrypoint", "bash", `"$WLC_IMAGE"`},
		[]string{"-c", `'mkdir -p "$1" && shift && exec "$@"'`, "wlc-job", `"$WLC_BENCH_DIR/$dir"`, `"$@"`, "</dev/null"})
	return "# wlc_job_run DIR CMD...: the custom job in the image, attached, with the\n" +
		"# GPUs and mounts the server would get (CMD brings the workload's env:\n" +
		"# wlc_job); DIR (under $WLC_BENCH_DIR) is made first. The container is\n" +
		"# removed at teardown, after its results.\n" +
		"wlc_job_run() {\n" +
		"  local dir=$1\n" +
		"  shift\n" +
		"  WLC_STARTED=1\n" +
		"  wlc_log \"running the custom job in container $WLC_CONTAINER\"\n" +
		"  " + runner.Continued(lines, "    ") + "\n" +
		"}\n", nil
}

// runCommand is the docker run command of the server, flags in a fixed
// order: containerFlags, then the image with bash as its entrypoint
// running the preflight, which then execs the server's whole command
// (`vllm serve`, or `python3 -m sglang.launch_server`) and arguments with
// the workload's environment.
func runCommand(w plan.Workload, host schema.DockerHost) (string, error) {
	flags, err := containerFlags(w, host, true)
	if err != nil {
		return "", err
	}
	// wlc_docker: a failed pull or a missing GPU runtime ends the job with
	// its infrastructure status.
	lines := append([][]string{{"wlc_docker", "run", "-d"}}, flags...)
	add := func(ws ...string) { lines = append(lines, ws) }
	if len(w.Tools) > 0 {
		// tools.sh runs in the container (docker exec) and reads it there.
		add("-e", "WLC_TOOLS_RETRY_S")
	}
	// The preflight is the container's first step: the image is only
	// there; the server starts once it passed (exec).
	opts, err := runner.Words(runner.ServeOptions(w, "--host", "--port"), runner.NoVars)
	if err != nil {
		return "", err
	}
	add("--entrypoint", "bash")
	add(`"$WLC_IMAGE"`)
	add("-c", `"$WLC_PREFLIGHT_SH"`, "wlc-preflight", `"$WLC_ENGINE"`, `"${WLC_ENV[@]}"`)
	for len(opts) > 0 {
		n := min(6, len(opts))
		add(opts[:n]...)
		opts = opts[n:]
	}
	add("--")
	if w.Engine != schema.EngineSGLang {
		add("vllm", "serve")
	}
	if w.Engine == schema.EngineSGLang {
		cmd, e := runner.Words(w.Serve.Command, runner.NoVars)
		if e != nil {
			return "", e
		}
		add(cmd...)
	}
	serve, e := runner.Words(w.Serve.Args, runner.NoVars)
	if e != nil {
		return "", e
	}
	lines = append(lines, runner.Group(serve)...)
	if x := runner.ServeExtra(w); x != nil {
		add(x...)
	}
	add("--host", "0.0.0.0")
	add("--port", `"$WLC_PORT"`)
	if err != nil {
		return "", err
	}
	return runner.Continued(lines, "    "), nil
}

// hfHome is the server's HF_HOME, mounted at the same path so the host's
// model cache is reused across jobs.
func hfHome(w plan.Workload) string {
	for _, e := range w.Env {
		if e.Name == "HF_HOME" && strings.HasPrefix(e.Value, "/") {
			return e.Value
		}
	}
	return ""
}
