package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestSmoke runs the whole benchmark at a small N, once, so the command
// cannot rot: the packages generate, every tool succeeds on them and does
// the whole job (both exporters print one step per workload), and the
// table, ratios and scaling rows come out. -base runs the same binary as
// the before/after comparison, whose ratios are then about 1.
func TestSmoke(t *testing.T) {
	root := testenv.RepoRoot(t)
	shared := testenv.SharedDir(t)
	wlc := filepath.Join(t.TempDir(), "wlc")
	build := exec.Command("go", "build", "-o", wlc, "./cmd/wlc")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	err := run(options{ns: []int{4, 8}, reps: 1, wlc: wlc, base: wlc, shared: shared, root: root}, &out, io.Discard)
	if errors.Is(err, errMissing) {
		testenv.Missing(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	var want []string
	for _, tool := range []string{"wlc vet", "base wlc vet", "cue vet -c", "cue export", "wlc export", "base wlc export", "generate_pipeline.py"} {
		for _, n := range []int{4, 8} {
			want = append(want, fmt.Sprintf(`(?m)^\s*%s\s+%d\s+\d+\.\d\d s\s`, regexp.QuoteMeta(tool), n))
		}
		want = append(want, fmt.Sprintf(`(?m)^%s\s+8/4\s+\d+\.\d\d\s`, regexp.QuoteMeta(tool)))
	}
	for _, pair := range pairs {
		for _, n := range []int{4, 8} {
			want = append(want, fmt.Sprintf(`(?m)^%s / %s\s+%d\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d$`,
				regexp.QuoteMeta(pair[0]), regexp.QuoteMeta(pair[1]), n))
		}
	}
	want = append(want, `(?m)^\s*wlc export\s+8\s.*\d+\.\d KB$`, `(?m)^\s*generate_pipeline\.py\s+8\s.*\d+\.\d KB$`)
	for _, re := range want {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s", re)
		}
	}
}

func TestRenameCue(t *testing.T) {
	src := []byte("package workloads\n\nworkloads: qwen3_5_b200: {\n\tprofile: \"B200\"\n}\n")
	got, err := renameCue(src, "qwen3_5_b200", replicaName("qwen3_5_b200", 7))
	if err != nil {
		t.Fatal(err)
	}
	if want := "package workloads\n\nworkloads: qwen3_5_b200_r0007: {\n\tprofile: \"B200\"\n}\n"; string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The run name follows the key: vet refuses two workloads with one.
	src = []byte("workloads: a_b: {\n\tdashboard_name:     \"a-b\"\n\tprofile: \"B200\"\n}\n")
	got, err = renameCue(src, "a_b", replicaName("a_b", 12))
	if err != nil {
		t.Fatal(err)
	}
	if want := "workloads: a_b_r0012: {\n\tdashboard_name:     \"a-b_r0012\"\n\tprofile: \"B200\"\n}\n"; string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A file whose key is not its stem cannot be replicated by renaming.
	if _, err := renameCue(src, "qwen3_5_h200", "x"); err == nil || !strings.Contains(err.Error(), `found 0`) {
		t.Errorf("renameCue of a missing key: err = %v", err)
	}
}

func TestRenameYAML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"name: a\ngpu: H200\nnightly: true\n", "name: b\ngpu: H200\nnightly: true\n"},
		{"name: a\nnightly: false\nvllm:\n  name: keep\n", "name: b\nnightly: true\nvllm:\n  name: keep\n"},
		{"gpu: GB300_SLURM\nvllm: {}", "gpu: GB300_SLURM\nvllm: {}\nnightly: true\n"},
	} {
		if got := string(renameYAML([]byte(tc.in), "b")); got != tc.want {
			t.Errorf("renameYAML(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTopLevelBlock(t *testing.T) {
	src := []byte("H200:\n  queue: h\nGB300_SLURM:\n  queue: g\n\n  # note\n  env:\n    A: \"1\"\nMI300X:\n  queue: m\n")
	got, err := topLevelBlock(src, "GB300_SLURM")
	if err != nil {
		t.Fatal(err)
	}
	if want := "GB300_SLURM:\n  queue: g\n\n  # note\n  env:\n    A: \"1\"\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := topLevelBlock(src, "B200"); err == nil {
		t.Error("topLevelBlock of an absent key: no error")
	}
}

func TestCheckSteps(t *testing.T) {
	p := &pkgs{n: 2, expected: 2}
	if err := checkSteps(p, []byte("steps:\n  - label: a\n  - label: b\n")); err != nil {
		t.Error(err)
	}
	if err := checkSteps(p, []byte("steps:\n  - label: a\n")); err == nil || !strings.Contains(err.Error(), "1 steps, want 2") {
		t.Errorf("a short pipeline: err = %v", err)
	}
	if err := checkSteps(p, []byte("wlc: error\n\t")); err == nil {
		t.Error("not a pipeline: no error")
	}
}

func TestStats(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median odd = %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median even = %v", got)
	}
	if got := ratios([]float64{2, 6, 1}, []float64{1, 3, 0}); fmt.Sprint(got) != "[2 2]" {
		t.Errorf("ratios = %v (a zero denominator is dropped)", got)
	}
	if got := fmtRatio([]float64{1, 3, 2}); got != "2.00 (1.00–3.00)" {
		t.Errorf("fmtRatio = %q", got)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-n", "2000, 1000,1000", "-reps", "5", "-only", "vet, export"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.ns) != "[1000 2000]" || o.reps != 5 || fmt.Sprint(o.only) != "[vet export]" {
		t.Errorf("ns = %v, reps = %d, only = %v", o.ns, o.reps, o.only)
	}
	for _, args := range [][]string{{"-n", "0"}, {"-n", "ten"}, {"-reps", "0"}, {"extra"}, {"-nope"}, {"-only", "vet,wlc"}} {
		if _, err := parseFlags(args); !errors.Is(err, errUsage) {
			t.Errorf("parseFlags(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestIsOverride(t *testing.T) {
	for name, want := range map[string]bool{
		"WORKLOADS": true, "VLLM_IMAGE": true, "B200_QUEUE": true, "MI300X_HF_CACHE_VOLUME": true,
		"BENCH_ONLY": true, "PATH": false, "HOME": false, "GOGC": false,
	} {
		if got := isOverride(name); got != want {
			t.Errorf("isOverride(%s) = %v", name, got)
		}
	}
}

// TestChildPeakExcludesOurs: Linux counts the parent's peak RSS into a
// vfork+exec child's ru_maxrss, so without lowerOwnPeak `true` reports
// the 128 MB this test touched; with it, a few MB.
func TestChildPeakExcludesOurs(t *testing.T) {
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Skip("no /proc/self/clear_refs (not Linux)")
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on PATH")
	}
	b := make([]byte, 128<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	b = nil
	childPeakMB := func() int64 {
		c := exec.Command(trueBin)
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		return maxrssKiB(c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	}
	if got := childPeakMB(); got < 100 {
		t.Logf("true reported %d MB before the reset: this kernel does not carry the parent's peak over", got)
	}
	lowerOwnPeak()
	if got := childPeakMB(); got > 48 {
		t.Errorf("true reported a peak RSS of %d MB after lowerOwnPeak, want the few MB it uses", got)
	}
}

// TestNoSharedDefault: the reference corpus is named explicitly; wlcbench
// never guesses a directory beside the checkout.
func TestNoSharedDefault(t *testing.T) {
	t.Setenv("WLC_SHARED", "")
	err := run(options{ns: []int{4}, reps: 1, root: testenv.RepoRoot(t)}, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "no reference corpus: pass -shared DIR or set WLC_SHARED") {
		t.Fatalf("run without -shared = %v, want a usage error naming -shared and WLC_SHARED", err)
	}
}

// TestGenerateBaseModule: with -base each build runs on the module its own
// `wlc init` made, keeping that init's wlc.cue (the typing lines its schema
// wants), so a change to the schema or to wlc.cue is measured before and
// after; both modules get the same profiles, settings and N workloads.
func TestGenerateBaseModule(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, marker string) string {
		bin := filepath.Join(dir, name)
		script := "#!/bin/sh\n# $1=init $2=--module $3=module $4=dir\nmkdir -p \"$4/workloads\" \"$4/cue.mod\"\n" +
			"echo '" + marker + "' > \"$4/workloads/wlc.cue\"\necho '// example' > \"$4/workloads/example.cue\"\n"
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	s := &source{
		stems:    []string{"a"},
		cue:      map[string][]byte{"a": []byte("package workloads\n\nworkloads: a: {}\n")},
		yaml:     map[string][]byte{"a": []byte("name: a\n")},
		profiles: []byte("package workloads\n// profiles\n"),
		settings: []byte("package workloads\n// settings\n"),
	}
	p, err := generate(s, fake("wlc", "// main typing"), fake("base", "// base typing"), filepath.Join(dir, "out"), 3)
	if err != nil {
		t.Fatal(err)
	}
	for mod, typing := range map[string]string{p.wlcDir: "// main typing\n", p.baseDir: "// base typing\n"} {
		entries, err := os.ReadDir(filepath.Join(mod, "workloads"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := []string{"a_r0000.cue", "a_r0001.cue", "a_r0002.cue", "profiles.cue", "settings.cue", "wlc.cue"}
		if !slices.Equal(names, want) {
			t.Errorf("%s/workloads holds %v, want %v", mod, names, want)
		}
		if got, _ := os.ReadFile(filepath.Join(mod, "workloads", "wlc.cue")); string(got) != typing {
			t.Errorf("%s/workloads/wlc.cue = %q, want its own init's %q", mod, got, typing)
		}
	}
	if p.baseDir == p.wlcDir || p.baseDir == "" {
		t.Errorf("base module %q, main %q: want two modules", p.baseDir, p.wlcDir)
	}
}
