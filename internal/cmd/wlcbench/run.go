package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"
)

// tool is one measured command.
type tool struct {
	name string
	kind string // what -only selects: vet, cue, export or generator
	// cmd is the command for one package; out is where its stdout goes.
	cmd func(p *pkgs, out *os.File) *exec.Cmd
	// check verifies the run did the whole job (so an error path is never
	// measured as a fast success).
	check func(p *pkgs, stdout []byte) error
	// export tools print a pipeline; its size per workload is reported.
	export bool
}

// sample is one run's cost, from wait4's rusage of the child.
type sample struct {
	wall   time.Duration
	cpu    time.Duration // user + sys
	rssKiB int64         // peak resident set
	outLen int64         // bytes written to stdout
	floor  int64         // the benchmark's own peak RSS at spawn (KiB), see lowerOwnPeak
}

// measure runs t on p once. Stdout goes to a file (scratch) so a 25 MB
// pipeline costs the tool what a pipe to buildkite-agent would, without
// the benchmark process reading it in the timed window.
func measure(t tool, p *pkgs, scratch string, verify bool) (sample, error) {
	lowerOwnPeak()
	out, err := os.Create(scratch)
	if err != nil {
		return sample{}, err
	}
	defer out.Close()
	cmd := t.cmd(p, out)
	cmd.Env = childEnv(cmd.Env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	floor := ownPeakKiB()
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s (N=%d): %v\n%s", t.name, p.n, err, tail(stderr.String(), 20))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, fmt.Errorf("%s: no rusage on %s", t.name, runtime.GOOS)
	}
	fi, err := out.Stat()
	if err != nil {
		return sample{}, err
	}
	s := sample{
		wall:   wall,
		cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		rssKiB: maxrssKiB(ru.Maxrss),
		outLen: fi.Size(),
		floor:  floor,
	}
	if verify {
		data, err := os.ReadFile(scratch)
		if err != nil {
			return sample{}, err
		}
		if err := t.check(p, data); err != nil {
			return sample{}, fmt.Errorf("%s (N=%d): %v", t.name, p.n, err)
		}
	}
	return s, nil
}

// lowerOwnPeak makes this process's peak RSS its (small) current RSS.
// Linux counts the parent's peak into a child's ru_maxrss (os/exec starts
// children with vfork, and exec records the shared memory's high-water mark
// in the child), so after the benchmark parsed a 50 MB pipeline every small
// tool would report the benchmark's peak; the generator's 40 MB read as
// 200 MB. Freeing the heap and resetting the mark (clear_refs 5, Linux ≥ 4.0)
// leaves ownRSSKiB, reported as the floor of every peak RSS.
func lowerOwnPeak() {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// ownPeakKiB is this process's peak RSS (VmHWM), which a child's peak RSS
// cannot go below; 0 where /proc is absent.
func ownPeakKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	return 0
}

// maxrssKiB converts ru_maxrss, KiB on Linux and bytes on Darwin.
func maxrssKiB(v int64) int64 {
	if runtime.GOOS == "darwin" {
		return v / 1024
	}
	return v
}

// overrides are the variables the exporters read from the build's
// environment (image, queue and cache overrides, selection): a developer's
// shell must not change what is measured.
func isOverride(name string) bool {
	switch {
	case name == "WORKLOADS", name == "BENCH_ONLY", strings.HasPrefix(name, "VLLM_"),
		strings.HasSuffix(name, "_QUEUE"), strings.HasSuffix(name, "_HF_CACHE_VOLUME"):
		return true
	}
	return false
}

func childEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !isOverride(name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// countSteps is the number of steps of a Buildkite pipeline.
func countSteps(data []byte) (int, error) {
	var p struct {
		Steps []yaml.Node `yaml:"steps"`
	}
	if err := yaml.Unmarshal(data, &p); err != nil {
		return 0, fmt.Errorf("output is not a pipeline: %v", err)
	}
	return len(p.Steps), nil
}

func checkSteps(p *pkgs, out []byte) error {
	n, err := countSteps(out)
	if err != nil {
		return err
	}
	if n != p.expected {
		return fmt.Errorf("pipeline has %d steps, want %d", n, p.expected)
	}
	return nil
}

// tools are the measured commands: wlc (and optionally a base build of
// it, for before/after) and its anchors: plain cue (vet -c, and export of
// the same package) and perf-eval's generator.
func tools(wlc, base, cue, python string) []tool {
	// Each build runs on the module its own `wlc init` made.
	mainDir := func(p *pkgs) string { return p.wlcDir }
	baseDir := func(p *pkgs) string { return p.baseDir }
	vet := func(name, bin string, dir func(*pkgs) string) tool {
		return tool{
			name: name,
			kind: "vet",
			cmd: func(p *pkgs, out *os.File) *exec.Cmd {
				// No time budget: a loaded machine is slow, not wrong.
				c := exec.Command(bin, "vet", "--timeout", "0", "workloads")
				c.Dir, c.Stdout = dir(p), out
				return c
			},
			check: func(p *pkgs, out []byte) error {
				if want := fmt.Sprintf("%d workload(s) ok\n", p.n); string(out) != want {
					return fmt.Errorf("printed %q, want %q", out, want)
				}
				return nil
			},
		}
	}
	export := func(name, bin string, dir func(*pkgs) string) tool {
		runs := 0
		return tool{
			name: name,
			kind: "export",
			cmd: func(p *pkgs, out *os.File) *exec.Cmd {
				// Each run exports into a directory of its own, as the
				// upload step of a fresh checkout does: an export over an
				// earlier one would also delete that one's files, a cost
				// of the directory's history, not of this export.
				runs++
				to := filepath.Join(p.dir, fmt.Sprintf("out-%s-%d", strings.ReplaceAll(name, " ", "_"), runs))
				c := exec.Command("sh", "-c", `"$0" export --timeout 0 --backend buildkite --all -o "$1" workloads >/dev/null && exec cat "$1"/pipeline.yml`, bin, to)
				c.Dir, c.Stdout = dir(p), out
				// The export writes its pipeline and the scripts its steps
				// download (-o, the whole job); the pipeline is then printed,
				// as the generator prints it. One pipeline: over Buildkite's
				// 500 jobs per upload wlc otherwise splits it into files. The
				// split costs nothing more.
				c.Env = []string{"WLC_JOBS_PER_UPLOAD=" + strconv.Itoa(p.n)}
				return c
			},
			check:  checkSteps,
			export: true,
		}
	}
	ts := []tool{vet("wlc vet", wlc, mainDir)}
	if base != "" {
		ts = append(ts, vet("base wlc vet", base, baseDir))
	}
	ts = append(ts, tool{
		name: "cue vet -c",
		kind: "cue",
		cmd: func(p *pkgs, out *os.File) *exec.Cmd {
			c := exec.Command(cue, "vet", "-c", "./workloads")
			c.Dir, c.Stdout = p.wlcDir, out
			return c
		},
		check: func(*pkgs, []byte) error { return nil }, // exit 0 is its verdict
	}, tool{
		// The package as JSON: what CUE alone does towards an export
		// (evaluate every workload concretely and print it), the anchor
		// of wlc export's cost beyond its load.
		name: "cue export",
		kind: "cue",
		cmd: func(p *pkgs, out *os.File) *exec.Cmd {
			c := exec.Command(cue, "export", "./workloads")
			c.Dir, c.Stdout = p.wlcDir, out
			return c
		},
		check:  checkWorkloadsJSON,
		export: true,
	}, export("wlc export", wlc, mainDir))
	if base != "" {
		ts = append(ts, export("base wlc export", base, baseDir))
	}
	return append(ts, tool{
		name: "generate_pipeline.py",
		kind: "generator",
		cmd: func(p *pkgs, out *os.File) *exec.Cmd {
			c := exec.Command(python, filepath.Join(".buildkite", "generate_pipeline.py"))
			c.Dir, c.Stdout = p.peDir, out
			return c
		},
		check:  checkSteps,
		export: true,
	})
}

// checkWorkloadsJSON verifies cue export printed every workload.
func checkWorkloadsJSON(p *pkgs, out []byte) error {
	var v struct {
		Workloads map[string]json.RawMessage `json:"workloads"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("output is not the package as JSON: %v", err)
	}
	if len(v.Workloads) != p.n {
		return fmt.Errorf("exported %d workloads, want %d", len(v.Workloads), p.n)
	}
	return nil
}
