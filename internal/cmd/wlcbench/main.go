// Command wlcbench measures wlc against its anchors, side by side: it
// generates packages of N workloads (the bundled workloads/ replicated
// under new keys, and their perf-eval originals as YAML), then runs
// `wlc vet`, plain `cue vet -c` and `cue export` (the CUE version wlc
// embeds), `wlc export --backend buildkite` and perf-eval's
// generate_pipeline.py interleaved, several repetitions, and prints wall,
// CPU (user+sys) and peak RSS of each child (wait4's rusage), min and
// median, the paired ratios and time(2N)/time(N). The machines are shared and noisy: compare ratios from
// one interleaved run, never a single timing.
//
//	go run ./internal/cmd/wlcbench                  # N=1000,2000, 3 repetitions
//	go run ./internal/cmd/wlcbench -n 1000 -reps 5 -base /tmp/wlc-before
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

type options struct {
	ns     []int
	reps   int
	wlc    string // prebuilt wlc; empty: build ./cmd/wlc
	base   string // a second wlc to compare with (before/after); optional
	cue    string
	python string
	shared string   // the reference corpus (-shared or $WLC_SHARED)
	dir    string   // keep the generated packages here; empty: a temp dir
	root   string   // the wlc checkout
	only   []string // tool kinds to run (vet, cue, export, generator); empty: all
}

var toolKinds = []string{"vet", "cue", "export", "generator"}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(o, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wlcbench:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("wlcbench", flag.ContinueOnError)
	ns := fs.String("n", "1000,2000", "comma-separated workload counts")
	fs.IntVar(&o.reps, "reps", 3, "repetitions of every (tool, N)")
	fs.StringVar(&o.wlc, "wlc", "", "wlc binary to measure (default: go build ./cmd/wlc)")
	fs.StringVar(&o.base, "base", "", "a second wlc binary measured alongside, for before/after ratios")
	fs.StringVar(&o.cue, "cue", "", "cue binary (default: $(go env GOPATH)/bin/cue, else cue on PATH); must be the version wlc embeds")
	fs.StringVar(&o.python, "python", "", "python3 with PyYAML for generate_pipeline.py (default: /usr/bin/python3, else python3 on PATH)")
	fs.StringVar(&o.shared, "shared", "", "the reference corpus holding corpus/perf-eval (default: $WLC_SHARED; one of them is required)")
	fs.StringVar(&o.dir, "dir", "", "write the generated packages here and keep them (default: a temporary directory)")
	only := fs.String("only", "", "run only these tools (comma-separated: vet, cue (cue vet -c and cue export), export, generator), e.g. vet,export with -base for a cheaper before/after")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("%w: -n %q: want positive workload counts such as 1000,2000", errUsage, *ns)
		}
		if !slices.Contains(o.ns, n) {
			o.ns = append(o.ns, n)
		}
	}
	slices.Sort(o.ns)
	if *only != "" {
		for _, k := range strings.Split(*only, ",") {
			if k = strings.TrimSpace(k); !slices.Contains(toolKinds, k) {
				return o, fmt.Errorf("%w: -only %q: %q is not one of %s", errUsage, *only, k, strings.Join(toolKinds, ", "))
			}
			o.only = append(o.only, k)
		}
	}
	if o.reps < 1 {
		return o, fmt.Errorf("%w: -reps %d: want at least 1", errUsage, o.reps)
	}
	return o, nil
}

// env is what the run found: the binaries and their versions.
type env struct {
	wlc, base, cue, python string
	cueVersion             string // the CUE version wlc embeds (= the cue CLI's)
	pythonVersion          string
}

// setup finds (or builds) every tool and checks the versions the
// comparison depends on.
func setup(o *options, work string) (*env, error) {
	if o.root == "" {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
			return nil, fmt.Errorf("run wlcbench inside the wlc checkout (go env GOMOD found no go.mod)")
		}
		o.root = filepath.Dir(strings.TrimSpace(string(out)))
	}
	if o.shared == "" {
		o.shared = os.Getenv("WLC_SHARED")
	}
	if o.shared == "" {
		return nil, fmt.Errorf("%w: no reference corpus: pass -shared DIR or set WLC_SHARED (the directory holding corpus/perf-eval: its workloads and generate_pipeline.py are the anchors wlc is measured against)", errUsage)
	}
	e := &env{wlc: o.wlc, base: o.base}
	if e.wlc == "" {
		e.wlc = filepath.Join(work, "bin", "wlc")
		build := exec.Command("go", "build", "-o", e.wlc, "./cmd/wlc")
		build.Dir = o.root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/wlc: %v\n%s", err, out)
		}
	}
	for _, bin := range []string{e.wlc, e.base} {
		if bin == "" {
			continue
		}
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			return nil, fmt.Errorf("%s version: %v", bin, err)
		}
		v := ""
		for _, l := range strings.Split(string(out), "\n") {
			if after, ok := strings.CutPrefix(l, "cue "); ok {
				v = after
			}
		}
		if e.cueVersion == "" {
			e.cueVersion = v
		}
		if v == "" || v != e.cueVersion {
			return nil, fmt.Errorf("%s embeds CUE %q, want %q (the -wlc binary's)", bin, v, e.cueVersion)
		}
	}
	if o.runs("cue") {
		if err := findCue(o, e); err != nil {
			return nil, err
		}
	}
	if o.runs("generator") {
		if err := findPython(o, e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// runs reports whether the tools of kind are measured.
func (o *options) runs(kind string) bool { return len(o.only) == 0 || slices.Contains(o.only, kind) }

// findCue finds the cue CLI and checks it is the CUE version wlc embeds.
func findCue(o *options, e *env) error {
	e.cue = o.cue
	if e.cue == "" {
		if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			p := filepath.Join(strings.SplitN(strings.TrimSpace(string(gopath)), string(os.PathListSeparator), 2)[0], "bin", "cue")
			if _, err := os.Stat(p); err == nil {
				e.cue = p
			}
		}
	}
	if e.cue == "" {
		e.cue, _ = exec.LookPath("cue")
	}
	install := "go install cuelang.org/go/cmd/cue@" + e.cueVersion
	if e.cue == "" {
		return fmt.Errorf("%w: no cue CLI in $(go env GOPATH)/bin or on PATH; install the version wlc embeds: %s", errMissing, install)
	}
	out, err := exec.Command(e.cue, "version").Output()
	if err != nil {
		return fmt.Errorf("%s version: %v", e.cue, err)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "cue version "+e.cueVersion {
		return fmt.Errorf("%s reports %q but wlc embeds CUE %s (go.mod): %s", e.cue, first, e.cueVersion, install)
	}
	return nil
}

// findPython finds a python3 that imports yaml, for perf-eval's generator.
func findPython(o *options, e *env) error {
	e.python = o.python
	if e.python == "" {
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			e.python = "/usr/bin/python3" // Debian's, with python3-yaml
		} else if p, err := exec.LookPath("python3"); err == nil {
			e.python = p
		} else {
			return fmt.Errorf("%w: no python3 for perf-eval's generator: apt-get install python3 python3-yaml", errMissing)
		}
	}
	out, err := exec.Command(e.python, "-c", "import sys, yaml; print('Python', sys.version.split()[0] + ',', 'PyYAML', yaml.__version__)").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s cannot import yaml (perf-eval's generator needs it): apt-get install python3-yaml\n%s", errMissing, e.python, out)
	}
	e.pythonVersion = strings.TrimSpace(string(out))
	return nil
}

// errMissing marks a tool the machine lacks (the smoke test skips outside CI).
var errMissing = errors.New("missing tool")

func run(o options, stdout, progress io.Writer) error {
	work := o.dir
	if work == "" {
		tmp, err := os.MkdirTemp("", "wlcbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	e, err := setup(&o, work)
	if err != nil {
		return err
	}
	src, err := readSource(o.root, filepath.Join(o.shared, "corpus", "perf-eval"))
	if err != nil {
		return err
	}
	packages := map[int]*pkgs{}
	for _, n := range o.ns {
		dir := filepath.Join(work, fmt.Sprintf("n%d", n))
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if packages[n], err = generate(src, e.wlc, e.base, dir, n); err != nil {
			return err
		}
	}
	ts := tools(e.wlc, e.base, e.cue, e.python)
	if len(o.only) > 0 {
		ts = slices.DeleteFunc(ts, func(t tool) bool { return !slices.Contains(o.only, t.kind) })
	}
	res := results{ns: o.ns, reps: o.reps, tools: ts, samples: map[key][]sample{}}
	load0 := loadavg()
	scratch := filepath.Join(work, "stdout")
	// Interleaved: every repetition runs every (N, tool) once, so a burst
	// of load on the shared machine hits all tools alike instead of one
	// tool's whole series; in an order shuffled anew each time, since what
	// ran just before a tool changes its cost on these virtual machines
	// (memory another process released is slower to touch again): with the
	// order only rotated each tool kept its predecessor, and one build
	// measured 1.15x another that callgrind counts 2% cheaper. The
	// shuffle is seeded: the same run gives the same orders.
	rng := rand.New(rand.NewPCG(1, 14))
	for rep := range o.reps {
		for _, n := range o.ns {
			for _, i := range rng.Perm(len(ts)) {
				t := ts[i]
				s, err := measure(t, packages[n], scratch, rep == 0)
				if err != nil {
					return err
				}
				k := key{t.name, n}
				res.samples[k] = append(res.samples[k], s)
				fmt.Fprintf(progress, "rep %d/%d  N=%-5d %-22s wall %7.2fs  cpu %7.2fs  rss %5d MB\n",
					rep+1, o.reps, n, t.name, s.wall.Seconds(), s.cpu.Seconds(), s.rssKiB/1024)
			}
		}
	}
	fmt.Fprintf(stdout, "wlcbench: N = %s; %d repetition(s), interleaved (tool order shuffled each repetition, seeded)\n",
		joinInts(o.ns), o.reps)
	fmt.Fprintf(stdout, "  %s/%s, %d CPUs%s, load average %s at start, %s at end\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), load0, loadavg())
	if e.cue != "" {
		fmt.Fprintf(stdout, "  cue %s (%s)\n", e.cueVersion, e.cue)
	}
	if e.python != "" {
		fmt.Fprintf(stdout, "  %s (%s)\n", e.pythonVersion, e.python)
	}
	fmt.Fprintf(stdout, "  peak RSS includes the benchmark's own resident set at each spawn, at most %d MB\n", res.maxFloorKiB()/1024)
	if e.base != "" {
		fmt.Fprintf(stdout, "  wlc %s; base %s\n", e.wlc, e.base)
	}
	fmt.Fprintln(stdout)
	res.write(stdout)
	return nil
}

// cpuModel is " (<model name>)" from /proc/cpuinfo, or "".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			if v = strings.TrimSpace(v); v != "" {
				return " (" + v + ")"
			}
		}
	}
	return ""
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := bytes.Fields(data)
	if len(f) < 3 {
		return "?"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
