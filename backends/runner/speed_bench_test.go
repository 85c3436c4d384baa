package runner_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// speedBench runs speed_bench.py against the stub NeMo-Skills
// preparation (internal/testrig/stub/python/speed_bench_prepare.py) and
// returns the JSONL it wrote (nil when it failed) and its output.
func speedBench(t *testing.T, prepare, subset, category, sha string) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("python3", "speed_bench.py", subset, category, dir, "file://"+prepare, sha)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, string(out)
	}
	data, rerr := os.ReadFile(filepath.Join(dir, subset+".jsonl"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	return data, string(out)
}

// TestSpeedBenchAsUpstream: a category's rows are the rows upstream's own
// preparation of the whole config writes (the HLE rows of a throughput
// config draw from one generator, row after row: resolving only the
// category's rows gave other prompts), and a pinned sha256 refuses a
// prepare.py that changed.
func TestSpeedBenchAsUpstream(t *testing.T) {
	testenv.LookPath(t, "python3")
	prepare := filepath.Join(testenv.RepoRoot(t), "internal", "testrig", "stub", "python", "speed_bench_prepare.py")
	// Upstream's: the whole config, prepared by the preparation itself.
	whole := filepath.Join(t.TempDir(), "whole.jsonl")
	ref := exec.Command("python3", "-c", "import importlib.util, sys\n"+
		"spec = importlib.util.spec_from_file_location('p', sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"+
		"m.prepare_data(sys.argv[2], sys.argv[3])", prepare, "throughput_1k", whole)
	if out, err := ref.CombinedOutput(); err != nil {
		t.Fatalf("upstream preparation: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(whole)
	var wantMath []string
	for _, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if strings.Contains(l, `"category": "math"`) {
			wantMath = append(wantMath, l)
		}
	}
	if len(wantMath) == 0 || !strings.Contains(strings.Join(wantMath, ""), "hle demonstrations") {
		t.Fatalf("the stub's math rows have no HLE row: %q", wantMath)
	}
	got, out := speedBench(t, prepare, "throughput_1k", "math", "")
	if got == nil {
		t.Fatalf("speed_bench.py failed:\n%s", out)
	}
	if g := strings.TrimSpace(string(got)); g != strings.Join(wantMath, "\n") {
		t.Errorf("math rows differ from upstream's preparation:\n got %s\nwant %s", g, strings.Join(wantMath, "\n"))
	}
	// Every row, no category: upstream's file itself.
	if got, out := speedBench(t, prepare, "throughput_1k", "", ""); !bytes.Equal(got, want) {
		t.Errorf("the whole config differs from upstream's preparation (%s):\n got %s\nwant %s", out, got, want)
	}

	src, _ := os.ReadFile(prepare)
	sum := sha256.Sum256(src)
	if got, out := speedBench(t, prepare, "qualitative", "", hex.EncodeToString(sum[:])); got == nil {
		t.Errorf("the pinned sha256 refused the same prepare.py:\n%s", out)
	}
	bad := strings.Repeat("0", 64)
	if got, out := speedBench(t, prepare, "qualitative", "", bad); got != nil || !strings.Contains(out, "not the pinned "+bad) {
		t.Errorf("a changed prepare.py was used (output %q)", out)
	}
}

// TestSpeedBenchPrepareIsPinned: a job fetches NeMo-Skills' prepare.py
// from a commit, never from a branch, so the prompts a SPEED-Bench run
// sends stay the same from one night to the next.
func TestSpeedBenchPrepareIsPinned(t *testing.T) {
	lib, err := os.ReadFile("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`WLC_SPEED_BENCH_PREPARE_URL=\$\{WLC_SPEED_BENCH_PREPARE_URL:-([^}]*)\}`).FindSubmatch(lib)
	if m == nil {
		t.Fatal("lib.sh sets no default WLC_SPEED_BENCH_PREPARE_URL")
	}
	url := string(m[1])
	if !regexp.MustCompile(`^https://raw\.githubusercontent\.com/NVIDIA-NeMo/Skills/[0-9a-f]{40}/nemo_skills/dataset/speed-bench/prepare\.py$`).MatchString(url) {
		t.Errorf("the default prepare.py URL %s is not NeMo-Skills' file at a commit id", url)
	}
}
