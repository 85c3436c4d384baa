package main

import (
	"bytes"
	"fmt"
	"io"
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
	// cache is how the tool meets wlc's result cache ($WLC_CACHE): cold
	// (emptied before every run, what a first run or a changed file
	// costs) or warm (filled by an unmeasured run: nothing changed since
	// the last run); "" for the anchors.
	cache string
}

const (
	cold = "cold"
	warm = "warm"
	// edited is warm, on a copy of the package in which one workload
	// file is changed (a comment appended) before every run: the
	// edit-vet loop.
	edited = "edited"
)

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
	if t.cache != "" {
		dir := filepath.Join(p.dir, "cache-"+t.cache+"-"+strings.ReplaceAll(t.name, " ", "_"))
		if err := primeCache(t, p, dir); err != nil {
			return sample{}, err
		}
		cmd.Env = append(cmd.Env, "WLC_CACHE="+dir)
	}
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

// primeCache readies t's cache in dir: empty for a cold run; for a warm
// one, filled by one unmeasured run the first time; for an edited one
// the same, then one workload file of the package's copy changed.
func primeCache(t tool, p *pkgs, dir string) error {
	if t.cache == cold {
		return os.RemoveAll(dir)
	}
	if _, err := os.Stat(dir); err == nil {
		return editOne(t, p)
	}
	if t.cache == edited {
		if err := os.CopyFS(p.editDir(), os.DirFS(p.wlcDir)); err != nil {
			return err
		}
	}
	cmd := t.cmd(p, nil)
	cmd.Env = childEnv(append(cmd.Env, "WLC_CACHE="+dir))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s (N=%d), filling its cache: %v\n%s", t.name, p.n, err, tail(stderr.String(), 20))
	}
	return editOne(t, p)
}

// editOne appends a comment to the first workload file of the edited
// tool's package copy: its shard's inputs change, the others' do not.
func editOne(t tool, p *pkgs) error {
	if t.cache != edited {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(p.editDir(), "workloads", "*_r0000.cue"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("%s: no workload file *_r0000.cue to edit in %s (%v)", t.name, p.editDir(), err)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "// edited %d\n", time.Now().UnixNano())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
// it, for before/after) and its anchors, plain cue and perf-eval's generator.
func tools(wlc, base, cue, python string) []tool {
	// Each build runs on the module its own `wlc init` made.
	mainDir := func(p *pkgs) string { return p.wlcDir }
	editDir := func(p *pkgs) string { return p.editDir() }
	baseDir := func(p *pkgs) string { return p.baseDir }
	vet := func(name, bin string, dir func(*pkgs) string, cache string) tool {
		return tool{
			name:  name,
			kind:  "vet",
			cache: cache,
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
	export := func(name, bin string, dir func(*pkgs) string, cache string) tool {
		return tool{
			name:  name,
			kind:  "export",
			cache: cache,
			cmd: func(p *pkgs, out *os.File) *exec.Cmd {
				c := exec.Command("sh", "-c", `"$0" export --timeout 0 --backend buildkite --all -o "$1" workloads >/dev/null && exec cat "$1"/pipeline.yml`, bin, filepath.Join(p.dir, "out-"+strings.ReplaceAll(name, " ", "_")))
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
	ts := []tool{vet("wlc vet", wlc, mainDir, cold), vet("wlc vet, cached", wlc, mainDir, warm), vet("wlc vet, 1 file edited", wlc, editDir, edited)}
	if base != "" {
		ts = append(ts, vet("base wlc vet", base, baseDir, cold))
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
	}, export("wlc export", wlc, mainDir, cold), export("wlc export, cached", wlc, mainDir, warm))
	if base != "" {
		ts = append(ts, export("base wlc export", base, baseDir, cold))
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
