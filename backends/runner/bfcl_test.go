package runner_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }

// server starts the stub vllm serving model and returns its base URL.
func server(t *testing.T, bin, model string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(filepath.Join(bin, "vllm"), "serve", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return url
		}
	}
	t.Fatal("the stub server did not start")
	return ""
}

// bfclRun runs the BFCL driver (bfcl.py, edited by edit) with BFCL's
// stand-in installed, against the stub server.
func bfclRun(t *testing.T, edit func(string) string, args ...string) (string, string, error) {
	t.Helper()
	bin := runnertest.Stubs(t)
	src, err := os.ReadFile("bfcl.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	driver := filepath.Join(dir, "bfcl.py")
	if err := os.WriteFile(driver, []byte(edit(string(src))), 0o644); err != nil {
		t.Fatal(err)
	}
	model := "org/Tiny Model-FC" // an HF id BFCL's table does not have
	url := server(t, bin, model)
	results, log := filepath.Join(dir, "results"), filepath.Join(dir, "log")
	cmd := exec.Command(filepath.Join(bin, "python3"), append([]string{driver, "--model", model, "--base-url", url,
		"--results-dir", results, "--num-threads", "2", "--temperature", "0.001"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PYTHONPATH="+stub.Python(bin, filepath.Join(dir, "site"), "bfcl-eval"), "WLC_STUB_LOG="+log,
		"OPENAI_API_KEY=", "BFCL_PROJECT_ROOT=/nonexistent")
	out, err := cmd.CombinedOutput()
	return string(out), dir, err
}

func same(s string) string { return s }

// TestBFCLDriver: a group with max_test_cases runs BFCL's first cases split
// evenly across its leaves, with the step limit where BFCL's handlers read
// it, generate then evaluate through BFCL's command line, and leaves one
// lm_eval results file per score: the group's (BFCL's own aggregate) and
// each leaf's.
func TestBFCLDriver(t *testing.T) {
	t.Parallel()
	out, dir, err := bfclRun(t, same, "--category", "multi_turn", "--maximum-step-limit", "7", "--max-test-cases", "7")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rs, err := stub.Records(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	gen, ev := runnertest.Find(rs, "bfcl", "generate"), runnertest.Find(rs, "bfcl", "evaluate")
	if len(gen) != 1 || len(ev) != 1 {
		t.Fatalf("%d generate and %d evaluate runs, want 1 each\n%s", len(gen), len(ev), out)
	}
	if gen[0].Time.After(ev[0].Time) {
		t.Error("evaluate ran before generate")
	}
	g := gen[0]
	if g.Flags["step_limit"] != "7" || g.Flags["cases"] != "7" {
		t.Errorf("generate saw step limit %s and %s cases, want 7 and 7", g.Flags["step_limit"], g.Flags["cases"])
	}
	if !stub.Has(g.Argv, "--run-ids") || !stub.Has(ev[0].Argv, "--partial-eval") {
		t.Errorf("a subset needs generate --run-ids and evaluate --partial-eval: %q, %q", g.Argv, ev[0].Argv)
	}
	if g.Env["BFCL_PROJECT_ROOT"] != filepath.Join(dir, "results", "bfcl", "multi_turn") {
		t.Errorf("BFCL_PROJECT_ROOT %s", g.Env["BFCL_PROJECT_ROOT"])
	}
	var ids map[string][]string
	data, _ := os.ReadFile(filepath.Join(dir, "results", "bfcl", "multi_turn", "test_case_ids_to_generate.json"))
	if err := json.Unmarshal(data, &ids); err != nil {
		t.Fatal(err)
	}
	// 7 over 4 leaves (sorted): 2, 2, 2, 1, each BFCL's first ids.
	want := map[string][]string{
		"multi_turn_base":         {"multi_turn_base_0", "multi_turn_base_1"},
		"multi_turn_long_context": {"multi_turn_long_context_0", "multi_turn_long_context_1"},
		"multi_turn_miss_func":    {"multi_turn_miss_func_0", "multi_turn_miss_func_1"},
		"multi_turn_miss_param":   {"multi_turn_miss_param_0"},
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("test case ids %v, want %v", ids, want)
	}
	// The stub scores even ids correct: 4 of 7 over the group (BFCL's CSV
	// aggregate, not the mean of the leaves, 0.625), 1 of 1 for miss_param.
	for task, acc := range map[string]float64{"bfcl_multi_turn": 0.5714, "bfcl_multi_turn_base": 0.5, "bfcl_multi_turn_miss_param": 1} {
		files, _ := filepath.Glob(filepath.Join(dir, "results", "lm_eval", task, "results_*.json"))
		if len(files) != 1 {
			t.Errorf("%s: %d results files", task, len(files))
			continue
		}
		var r struct {
			Results map[string]map[string]any `json:"results"`
			Config  map[string]any            `json:"config"`
		}
		data, _ := os.ReadFile(files[0])
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if got := r.Results[task]["acc,none"]; got != acc {
			t.Errorf("%s: acc,none %v, want %v", task, got, acc)
		}
		if r.Config["model_args"] != "model=org/Tiny Model-FC" {
			t.Errorf("%s: config %v", task, r.Config)
		}
	}
}

// TestBFCLDriverAsBFCLRefuses: what the real BFCL refuses fails the run:
// a model left out of its table, an option its command line lacks.
func TestBFCLDriverAsBFCLRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"unregistered", func(s string) string { return strings.Replace(s, "    register(a.model)\n", "", 1) }, "Unknown model_name 'org/Tiny Model-FC'"},
		{"unknown option", func(s string) string { return strings.Replace(s, `"--skip-server-setup"`, `"--skip-server"`, 1) }, "No such option: --skip-server"},
		{"unknown option of evaluate", func(s string) string {
			return strings.Replace(s, `ev.append("--partial-eval")`, `ev.append("--partial")`, 1)
		}, "No such option: --partial"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			edited := false
			out, _, err := bfclRun(t, func(s string) string {
				e := c.edit(s)
				edited = e != s
				return e
			}, "--category", "simple_python", "--maximum-step-limit", "10", "--max-test-cases", "2")
			if !edited {
				t.Fatal("the edit did not apply to bfcl.py")
			}
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("err %v, want a failure saying %q:\n%s", err, c.want, out)
			}
			if strings.Contains(out, "accuracy") {
				t.Errorf("scores were written:\n%s", out)
			}
		})
	}
}
