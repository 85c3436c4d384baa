// Command jobbench measures a job's timeline side by side under the
// stand-in tools (internal/testrig/stub) with configurable delays: the
// server takes S seconds to load, each pip install P, each benchmark B and
// each evaluation E. It runs, interleaved, on equivalent workloads (one
// `vllm bench serve` run and one lm_eval task):
//
//	wlc            wlc's native job, lm_eval missing from the image (installed)
//	wlc-present    the same script, lm_eval already in the image
//	perf-eval      perf-eval's runtime: its Buildkite setup step (venv, pip
//	               install lm-eval[api] pyyaml) then its lib/run.sh
//
// and reports, per variant, min and median of: the wall time; the GPU-held
// time beyond the server's own load and the clients' own work (wall − S −
// B − E, the "overhead"); start → server start; server ready → first
// client; last request → exit. Then the install's cost to wlc (overhead
// with the tools missing minus present) and perf-eval's overhead over
// wlc's. The GPUs are held for the whole job, so every second of overhead
// is GPU time wasted.
//
//	go run ./internal/cmd/jobbench -shared DIR        # a smoke run: tiny delays, 1 repetition
//	go run ./internal/cmd/jobbench -shared DIR -S 20 -P 15 -B 2 -E 2 -reps 3
//
// perf-eval's runtime comes from the reference corpus DIR, the directory
// holding corpus/perf-eval (-shared or $WLC_SHARED, required); its server listens on port 8000, which
// must be free.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

type options struct {
	s, p, b, e float64
	reps       int
	shared     string
	keep       bool
}

func main() {
	var o options
	flag.Float64Var(&o.s, "S", 1, "seconds the server takes to load")
	flag.Float64Var(&o.p, "P", 0.8, "seconds each pip install takes")
	flag.Float64Var(&o.b, "B", 0.3, "seconds each benchmark run takes")
	flag.Float64Var(&o.e, "E", 0.3, "seconds each evaluation takes")
	flag.IntVar(&o.reps, "reps", 1, "repetitions of each variant, interleaved")
	flag.StringVar(&o.shared, "shared", "", "the reference corpus holding corpus/perf-eval (default: $WLC_SHARED; one of them is required)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.Parse()
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "jobbench:", err)
		os.Exit(1)
	}
}

// run is the whole benchmark, its report written to out.
func run(o options, out io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if o.shared == "" {
		o.shared = os.Getenv("WLC_SHARED")
	}
	if o.shared == "" {
		return fmt.Errorf("the reference corpus is not found: pass -shared DIR or set WLC_SHARED (the directory holding corpus/perf-eval)")
	}
	tmp, err := os.MkdirTemp("", "jobbench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(out, "work directory:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	r, err := prepare(o, root, tmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "jobbench: S=%gs (server load) P=%gs (each pip install) B=%gs (bench) E=%gs (eval), %d repetition(s), interleaved\n",
		o.s, o.p, o.b, o.e, o.reps)
	variants := []string{"wlc", "wlc-present", "perf-eval"}
	got := map[string][]timeline{}
	for rep := 0; rep < o.reps; rep++ {
		for i := range variants {
			v := variants[(i+rep)%len(variants)] // a different order each repetition
			tl, err := r.once(v, rep)
			if err != nil {
				return fmt.Errorf("%s, repetition %d: %w", v, rep+1, err)
			}
			got[v] = append(got[v], tl)
		}
	}
	report(out, o, variants, got)
	return nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run it inside the wlc checkout (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// runner holds what every run shares: the stubs, wlc's script, perf-eval's
// tree, the image's Python site and the environment.
type runner struct {
	o         options
	tmp, bin  string
	wlcScript string
	perfEval  string // a copy of perf-eval's runtime with the workload
	setup     string // perf-eval's Buildkite setup command
	imageSite string // the image's site: PyYAML (which perf-eval's tools need) and nothing else
	env       []string
}

// The equivalent workloads: one bench run (16 prompts at concurrency 4)
// and lm_eval gsm8k, 5-shot, on one GPU.
const (
	model     = "Qwen/Qwen3-8B"
	benchRuns = 1
	evalRuns  = 1
)

const wlcWorkload = `package workloads

profiles: H100: {
	hardware: "H100"
	runtime:  "k8s"
	queue:    "h100"
	hf_home:  "/tmp/jobbench-hf"
	k8s: plugin: "nvidia"
}

workloads: timeline_h100: {
	profile:       "H100"
	gpus_per_node: 1
	model:         "` + model + `"
	precision:     "bf16"
	serve: max_num_seqs: 64
	vllm_bench: configs: [{
		name:            "short"
		backend:         "openai"
		input_len:       128
		output_len:      16
		max_concurrency: 4
		num_prompts:     16
	}]
	lm_eval: tasks: [{name: "gsm8k", num_fewshot: 5}]
}
`

const wlcSchema = `package workloads

import "github.com/wlcdev/wlc/schema"

profiles: [Name=string]: schema.#Profile & {name: Name}
workloads: [Name=string]: W={schema.#Workload & {name: Name, #profile: profiles[W.profile].#facts, #profileNames: _profileNames}}
_profileNames: [for name, _ in profiles {name}]
`

const perfEvalWorkload = `name: timeline_h100
gpu: H100
num_gpus: 1
vllm:
  model: ` + model + `
  serve_args: --max-num-seqs 64
lm_eval:
  tasks:
    - name: gsm8k
      num_fewshot: 5
vllm_bench:
  configs:
    - name: short
      backend: openai
      input_len: 128
      output_len: 16
      num_prompts: 16
      max_concurrency: 4
`

func prepare(o options, root, tmp string) (*runner, error) {
	r := &runner{o: o, tmp: tmp, bin: filepath.Join(tmp, "bin")}
	if err := stub.BuildDir(r.bin); err != nil {
		return nil, err
	}
	wlc := filepath.Join(tmp, "wlc")
	if err := command(root, nil, "go", "build", "-o", wlc, "./cmd/wlc"); err != nil {
		return nil, err
	}
	pkg := filepath.Join(tmp, "wlc-package")
	for name, text := range map[string]string{
		"cue.mod/module.cue":     "module: \"github.com/wlcdev/wlc@v0\"\nlanguage: version: \"v0.17.1\"\n",
		"workloads/wlc.cue":      wlcSchema,
		"workloads/timeline.cue": wlcWorkload,
	} {
		if err := write(filepath.Join(pkg, name), text); err != nil {
			return nil, err
		}
	}
	if err := command(pkg, nil, wlc, "export", "--backend", "native", "--workloads", "timeline_h100", "-o", "out", "workloads"); err != nil {
		return nil, err
	}
	r.wlcScript = filepath.Join(pkg, "out", "timeline_h100.sh")

	// perf-eval's runtime as its repository has it, with a GPU profile
	// running the server natively and the workload.
	main := filepath.Join(o.shared, "corpus", "perf-eval", "runtime", "main")
	r.perfEval = filepath.Join(tmp, "perf-eval")
	if err := os.CopyFS(r.perfEval, os.DirFS(main)); err != nil {
		return nil, fmt.Errorf("perf-eval's runtime (-shared %s): %w", o.shared, err)
	}
	_ = filepath.WalkDir(r.perfEval, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			mode := os.FileMode(0o644)
			if d.IsDir() || strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".py") {
				mode = 0o755
			}
			_ = os.Chmod(p, mode)
		}
		return nil
	})
	if err := write(filepath.Join(r.perfEval, "lib", "gpu_profiles.yaml"), "H100:\n  server_runtime: native\n"); err != nil {
		return nil, err
	}
	if err := write(filepath.Join(r.perfEval, "workloads", "timeline_h100.yaml"), perfEvalWorkload); err != nil {
		return nil, err
	}

	// The image's Python: the real interpreter with PyYAML (which
	// perf-eval's generator and parser import) and nothing else of its
	// site; the client tools are what the stubs' fake pip installs.
	python, yamlDir, err := realPython(r.bin)
	if err != nil {
		return nil, err
	}
	r.imageSite = filepath.Join(tmp, "image-site")
	if err := os.MkdirAll(r.imageSite, 0o755); err != nil {
		return nil, err
	}
	if err := os.Symlink(yamlDir, filepath.Join(r.imageSite, "yaml")); err != nil {
		return nil, err
	}
	setup, err := output(r.perfEval, []string{"PYTHONPATH=" + r.imageSite}, python, "-c",
		"import sys; sys.path.insert(0, '.buildkite'); import generate_pipeline as g; print(g.FULL_SETUP_COMMANDS[0])")
	if err != nil {
		return nil, fmt.Errorf("perf-eval's setup command: %w", err)
	}
	r.setup = strings.TrimSpace(setup)
	r.env = []string{
		"PATH=" + r.bin + string(filepath.ListSeparator) + filepath.Dir(python) + string(filepath.ListSeparator) + os.Getenv("PATH"),
		"WLC_STUB_STARTUP_DELAY=" + ftoa(o.s),
		"WLC_STUB_PIP_DELAY=" + ftoa(o.p),
		"WLC_STUB_BENCH_DELAY=" + ftoa(o.b),
		"WLC_STUB_EVAL_DELAY=" + ftoa(o.e),
		// No dashboards: without a token both runtimes keep their rows.
		"INGEST_BEARER_TOKEN=", "PERF_INGEST_URL=http://127.0.0.1:9/", "INGEST_URL=http://127.0.0.1:9/",
		"WLC_RUN_ID=", "WLC_PORT=", "WLC_RESULTS_DIR=", "WLC_POLL_S=", "WLC_TOOLS_VENV=",
		"VLLM_IMAGE=", "VLLM_COMMIT=", "BENCH_ONLY=",
	}
	return r, nil
}

// realPython is the interpreter the stub python3 runs (the first python3
// on PATH after the stubs, else /usr/bin/python3) that has PyYAML, and
// PyYAML's package directory.
func realPython(bin string) (string, string, error) {
	var tried []string
	for _, p := range append(filepath.SplitList(os.Getenv("PATH")), "/usr/bin") {
		py := filepath.Join(p, "python3")
		if p == bin || slices.Contains(tried, py) {
			continue
		}
		tried = append(tried, py)
		out, err := output("", nil, py, "-c", "import os, yaml; print(os.path.dirname(yaml.__file__))")
		if err == nil {
			return py, strings.TrimSpace(out), nil
		}
	}
	return "", "", fmt.Errorf("no python3 with PyYAML (perf-eval's runtime needs it) among %s", strings.Join(tried, ", "))
}

// timeline is one job's measurements, in seconds.
type timeline struct {
	wall, overhead, toServer, readyToFirst, lastToExit float64
	installs                                           int
}

// once runs variant v in a fresh directory and reads its timeline from the
// stubs' records.
func (r *runner) once(v string, rep int) (timeline, error) {
	dir := filepath.Join(r.tmp, fmt.Sprintf("%s-%d", v, rep+1))
	records := filepath.Join(dir, "records")
	env := append(append([]string{}, r.env...),
		"WLC_STUB_LOG="+records,
		"WLC_FAKE_DOCKER_STATE="+filepath.Join(dir, "docker"),
		"WLC_STUB_PIP_SITE="+filepath.Join(dir, "image-user-site"),
		"HOME="+filepath.Join(dir, "home"),
		fmt.Sprintf("BUILDKITE_JOB_ID=jobbench-%s-%d-%d", v, rep+1, time.Now().UnixNano()))
	pythonpath := filepath.Join(r.bin, "python") + string(filepath.ListSeparator) + r.imageSite
	var cmd []string
	switch v {
	case "wlc", "wlc-present":
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return timeline{}, err
		}
		if v == "wlc-present" {
			pythonpath += string(filepath.ListSeparator) + filepath.Join(r.bin, "python", "dists", "lm-eval")
		}
		cmd = []string{"bash", r.wlcScript}
	case "perf-eval":
		if err := os.CopyFS(dir, os.DirFS(r.perfEval)); err != nil {
			return timeline{}, err
		}
		if !portFree(8000) {
			return timeline{}, errors.New("port 8000, where perf-eval's run.sh starts its server, is taken")
		}
		// The Buildkite step: its setup command, then its run command
		// (generate_pipeline.py's RUN_TEMPLATE without the secret and
		// HF cache), in one bash -e as the agent runs a step's commands.
		cmd = []string{"bash", "-e", "-c", r.setup + "\n" +
			`export PATH="$(pwd)/.venv/bin:$HOME/.local/bin:$PATH"` + "\n" +
			"./lib/run.sh workloads/timeline_h100.yaml"}
	}
	env = append(env, "PYTHONPATH="+pythonpath)
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Output to a file, not a pipe: perf-eval's log streamer (tail -f)
	// outlives its job and would hold a pipe open.
	logFile, err := os.Create(filepath.Join(r.tmp, fmt.Sprintf("%s-%d.log", v, rep+1)))
	if err != nil {
		return timeline{}, err
	}
	defer logFile.Close()
	c.Stdout, c.Stderr = logFile, logFile
	start := time.Now()
	err = c.Run()
	end := time.Now()
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // nothing of it may outlive it
	text, _ := os.ReadFile(logFile.Name())
	log := string(text)
	if err != nil {
		return timeline{}, fmt.Errorf("%v\n%s", err, log)
	}
	rs, err := stub.Records(records)
	if err != nil {
		return timeline{}, err
	}
	at := func(program, mode string) []stub.Record {
		var out []stub.Record
		for _, rec := range rs {
			if rec.Program == program && rec.Mode == mode {
				out = append(out, rec)
			}
		}
		return out
	}
	serve, ready, stopped := at("vllm", "serve"), at("vllm", "ready"), at("vllm", "stopped")
	clients := append(at("vllm", "bench"), at("lm_eval", "eval")...)
	if len(serve) != 1 || len(ready) != 1 || len(stopped) != 1 || len(clients) != benchRuns+evalRuns {
		return timeline{}, fmt.Errorf("%d servers, %d ready, %d stopped, %d clients; want 1, 1, 1, %d\n%s",
			len(serve), len(ready), len(stopped), len(clients), benchRuns+evalRuns, log)
	}
	first := clients[0].Time
	for _, c := range clients {
		if c.Time.Before(first) {
			first = c.Time
		}
	}
	last, err := time.Parse(time.RFC3339Nano, stopped[0].Flags["last_request"])
	if err != nil {
		return timeline{}, fmt.Errorf("the server saw no request: %v", err)
	}
	wall := end.Sub(start).Seconds()
	return timeline{
		wall:         wall,
		overhead:     wall - r.o.s - benchRuns*r.o.b - evalRuns*r.o.e,
		toServer:     serve[0].Time.Sub(start).Seconds(),
		readyToFirst: first.Sub(ready[0].Time).Seconds(),
		lastToExit:   end.Sub(last).Seconds(),
		installs:     len(at("pip", "install")),
	}, nil
}

func report(out io.Writer, o options, variants []string, got map[string][]timeline) {
	cols := []struct {
		name string
		f    func(timeline) float64
	}{
		{"wall", func(t timeline) float64 { return t.wall }},
		{"overhead", func(t timeline) float64 { return t.overhead }},
		{"start→server", func(t timeline) float64 { return t.toServer }},
		{"ready→1st client", func(t timeline) float64 { return t.readyToFirst }},
		{"last request→exit", func(t timeline) float64 { return t.lastToExit }},
	}
	fmt.Fprintf(out, "\nseconds, min / median of %d; overhead = wall − S − B − E: the GPU-held time beyond the server's load and the clients' work\n", o.reps)
	fmt.Fprintf(out, "%-12s", "variant")
	for _, c := range cols {
		fmt.Fprintf(out, " %19s", c.name)
	}
	fmt.Fprintf(out, " %9s\n", "installs")
	med := map[string]map[string]float64{}
	for _, v := range variants {
		med[v] = map[string]float64{}
		fmt.Fprintf(out, "%-12s", v)
		for _, c := range cols {
			var xs []float64
			for _, t := range got[v] {
				xs = append(xs, c.f(t))
			}
			slices.Sort(xs)
			m := median(xs)
			med[v][c.name] = m
			fmt.Fprintf(out, " %19s", fmt.Sprintf("%.2f / %.2f", xs[0], m))
		}
		fmt.Fprintf(out, " %9d\n", got[v][0].installs)
	}
	install := med["wlc"]["overhead"] - med["wlc-present"]["overhead"]
	fmt.Fprintf(out, "\nthe install's cost to wlc (overhead, tools missing − present): %.2fs (P = %gs)\n", install, o.p)
	fmt.Fprintf(out, "perf-eval's overhead / wlc's: %.2fs / %.2fs = %.1f×\n",
		med["perf-eval"]["overhead"], med["wlc"]["overhead"], med["perf-eval"]["overhead"]/med["wlc"]["overhead"])
	fmt.Fprintf(out, "targets (wlc, medians): install ≤ 1 s: %s; ready → first client ≤ 0.5 s: %s (%.2fs); last request → exit ≤ 1 s: %s (%.2fs)\n",
		mark(install <= 1), mark(med["wlc"]["ready→1st client"] <= 0.5), med["wlc"]["ready→1st client"],
		mark(med["wlc"]["last request→exit"] <= 1), med["wlc"]["last request→exit"])
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func portFree(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond)
	if err == nil {
		c.Close()
		return false
	}
	return true
}

func write(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

func command(dir string, env []string, name string, args ...string) error {
	_, err := output(dir, env, name, args...)
	return err
}

func output(dir string, env []string, name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
