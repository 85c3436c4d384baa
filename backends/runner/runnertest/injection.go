package runnertest

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// CheckInjection asserts, for a job run of testdata/backends/*/injection.txtar,
// that the hostile values arrived verbatim and nothing executed.
func CheckInjection(t testing.TB, j *Job, res Result) {
	t.Helper()
	model := j.W.Model
	rs := j.Records(t)
	serve := Find(rs, "vllm", "serve")
	if len(serve) != 1 {
		t.Fatalf("%d servers, want 1", len(serve))
	}
	// The server's argv is `serve`, then exactly the plan's args, then the
	// runner's --host/--port.
	argv := serve[0].Argv
	want := append([]string{"serve"}, j.W.Serve.Args...)
	if len(argv) < len(want) || !slices.Equal(argv[:len(want)], want) {
		t.Errorf("server argv\n got %q\nwant %q + --host/--port", argv, want)
	}
	if rest := argv[len(want):]; len(rest) != 4 || rest[0] != "--host" || rest[2] != "--port" {
		t.Errorf("server argv ends %q, want --host H --port P", rest)
	}
	for _, e := range j.W.Env {
		if got, ok := serve[0].Env[e.Name]; !ok || got != e.Value {
			t.Errorf("server env %s = %q, want %q", e.Name, got, e.Value)
		}
	}
	bench := Find(rs, "vllm", "bench")
	if len(bench) == 0 {
		t.Fatal("no bench run")
	}
	for _, b := range bench {
		if !slices.Equal(b.Argv[:len(j.W.Bench[0].Args)+2], append([]string{"bench", "serve"}, j.W.Bench[0].Args...)) {
			t.Errorf("bench argv\n got %q\nwant %q", b.Argv, j.W.Bench[0].Args)
		}
	}
	lm := Find(rs, "lm_eval", "eval")
	if len(lm) != 1 {
		t.Fatalf("%d lm_eval runs, want 1", len(lm))
	}
	if ma, _ := stub.Flag(lm[0].Argv, "--model_args"); !strings.HasPrefix(ma, "model="+model+",base_url=http://") {
		t.Errorf("lm_eval --model_args %q does not start with the verbatim model", ma)
	}
	for _, mode := range []string{"generate", "evaluate"} {
		bf := Find(rs, "bfcl", mode)
		if len(bf) != 1 {
			t.Fatalf("%d bfcl %s runs, want 1", len(bf), mode)
		}
		if m, _ := stub.Flag(bf[0].Argv, "--model"); m != model {
			t.Errorf("bfcl %s --model %q, want %q", mode, m, model)
		}
		cat := j.W.BFCL[0].Category
		if root := bf[0].Env["BFCL_PROJECT_ROOT"]; !filepath.IsAbs(root) || !strings.HasSuffix(root, "/bfcl/"+cat) {
			t.Errorf("BFCL_PROJECT_ROOT %q, want <results as the clients see them>/bfcl/%s", root, cat)
		}
		// Registered under its verbatim name, for the OpenAI-compatible handler.
		var table map[string]struct {
			Handler string `json:"handler"`
		}
		if err := json.Unmarshal([]byte(bf[0].Env["WLC_STUB_BFCL_MODELS"]), &table); err != nil || table[model].Handler != "OpenAICompletionsHandler" {
			t.Errorf("bfcl %s: model table %s (%v) lacks %q with OpenAICompletionsHandler", mode, bf[0].Env["WLC_STUB_BFCL_MODELS"], err, model)
		}
	}
	if pwned, _ := filepath.Glob("/tmp/wlc-pwned-*"); len(pwned) > 0 {
		t.Errorf("payloads executed: %v", pwned)
	}
	if !strings.Contains(res.Output, "server ready") {
		t.Errorf("the readiness check did not match the model:\n%s", res.Output)
	}
}
