package stub_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// TestCommandLines: the lm_eval and bfcl stand-ins accept what lm-eval's
// argparse parser and BFCL's typer app accept, and refuse the rest with
// their usage status 2 (the stubs then fail for lack of a server: status
// 1, which is how an accepted command line shows here).
func TestCommandLines(t *testing.T) {
	bin := stub.Build(t, t.TempDir())
	for _, c := range []struct {
		argv []string
		code int
		say  string
	}{
		// lm-eval: the job's command, legacy form (run inserted).
		{[]string{"lm_eval", "--model", "local-completions", "--model_args", "model=m,base_url=http://127.0.0.1:1/v1/completions",
			"--tasks", "gsm8k", "--num_fewshot", "5", "--output_path", "o", "--log_samples"}, 1, "connect"},
		{[]string{"lm_eval", "run", "-M", "local-completions", "-a", "model=m", "base_url=http://127.0.0.1:1/x", "-t", "a", "b",
			"-o", "o", "-s", "--apply_chat_template"}, 1, "connect"},
		// argparse takes unambiguous prefixes of long options.
		{[]string{"lm_eval", "--model", "local-completions", "--model_a", "model=m,base_url=http://127.0.0.1:1/x", "--tasks", "a", "--output_p", "o", "--log_s"}, 1, "connect"},
		{[]string{"lm_eval", "--model", "local-completions", "--tasks", "a", "--no_such_option", "x"}, 2, "unrecognized arguments: --no_such_option"},
		{[]string{"lm_eval", "--model", "local-completions", "--tasks", "a", "--wandb", "x"}, 2, "ambiguous option: --wandb"},
		{[]string{"lm_eval", "--model", "local-completions", "--tasks", "a", "--log_samples=yes"}, 2, "ignored explicit argument"},
		{[]string{"lm_eval", "--model", "local-completions", "--num_fewshot"}, 2, "expected one argument"},
		{[]string{"lm_eval", "--model", "local-completions", "--tasks", "a", "--log_samples", "stray"}, 2, "unrecognized arguments: stray"},
		// bfcl: click takes exact names only, values typed.
		{[]string{"bfcl", "generate", "--model", "gorilla-openfunctions-v2", "--test-category", "simple_python", "--num-threads", "8",
			"--temperature", "0.001", "--skip-server-setup", "--run-ids", "-o"}, 1, "BFCL_PROJECT_ROOT"},
		{[]string{"bfcl", "evaluate", "--model", "gorilla-openfunctions-v2", "--test-category", "simple_python", "--partial-eval"}, 1, "BFCL_PROJECT_ROOT"},
		{[]string{"bfcl", "generate", "--num-thread", "8"}, 2, "No such option: --num-thread"},
		{[]string{"bfcl", "generate", "--num-threads", "many"}, 2, "'many' is not a valid integer"},
		{[]string{"bfcl", "evaluate", "--run-ids"}, 2, "No such option: --run-ids"},
		{[]string{"bfcl", "generate", "--skip-server-setup=true"}, 2, "does not take a value"},
		{[]string{"bfcl", "generate", "simple_python"}, 2, "unexpected extra argument (simple_python)"},
		{[]string{"bfcl", "bench"}, 2, "No such command 'bench'"},
	} {
		cmd := exec.Command(filepath.Join(bin, c.argv[0]), c.argv[1:]...)
		cmd.Env = append(os.Environ(), "BFCL_PROJECT_ROOT=", "WLC_STUB_LOG=")
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(string(out), c.say) {
			t.Errorf("%q: exit %d, want %d saying %q:\n%s", c.argv, code, c.code, c.say, out)
		}
	}
}

// TestBFCLModelTable: BFCL runs only models in its table; the table the
// caller registers (WLC_STUB_BFCL_MODELS) extends BFCL's own.
func TestBFCLModelTable(t *testing.T) {
	bin := stub.Build(t, t.TempDir())
	run := func(models string) string {
		cmd := exec.Command(filepath.Join(bin, "bfcl"), "generate", "--model", "org/served", "--test-category", "simple_python")
		cmd.Env = append(os.Environ(), "BFCL_PROJECT_ROOT="+t.TempDir(), "WLC_STUB_BFCL_MODELS="+models, "WLC_STUB_LOG=",
			"OPENAI_API_KEY=x", "OPENAI_BASE_URL=")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run(""); !strings.Contains(out, "Unknown model_name 'org/served'") {
		t.Errorf("an unregistered model: %s", out)
	}
	if out := run(`{"org/served": {"handler": "QwenFCHandler", "is_fc_model": true}}`); !strings.Contains(out, "vendor's API") {
		t.Errorf("a model registered for another handler: %s", out)
	}
	if out := run(`{"org/served": {"handler": "OpenAICompletionsHandler", "is_fc_model": true}}`); !strings.Contains(out, "OPENAI_BASE_URL is not set") {
		t.Errorf("a registered model, no server: %s", out)
	}
}
