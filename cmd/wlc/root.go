package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/load"
)

// Exit codes: 0 ok, 1 invalid input (already reported), 2 usage.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

// errReported means the findings were printed; only the exit code is left.
var errReported = errors.New("reported")

// usageError is a command-line mistake: exit 2 with the message.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// env is what a command may touch of the outside world; tests inject it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	envList        func() []string
	cwd            string
	// ctx is the one cue.Context of this run.
	ctx *cue.Context
}

// loadWorkloads runs the loader once for the run and prints its findings.
// It returns the result even when it has errors, so vet can report and
// list/show can refuse.
func (e *env) loadWorkloads(dir string, o load.Options) (*load.Result, error) {
	if e.ctx == nil {
		e.ctx = cuecontext.New()
	}
	o.Vetters = vetters()
	return load.Load(e.ctx, dir, e.cwd, o), nil
}

// vetters are the registered backends' vet-time rules: wlc vet reports
// what a backend's Lower would refuse, at the user's field.
func vetters() []load.Vetter {
	var out []load.Vetter
	for _, b := range registry.All() {
		if v, ok := b.(load.Vetter); ok {
			out = append(out, v)
		}
	}
	return out
}

// requireClean prints findings and fails when any is an error.
func (e *env) requireClean(r *load.Result) error {
	if len(r.Diags) > 0 {
		r.Diags.WriteText(e.stderr)
	}
	if r.Diags.HasErrors() {
		fmt.Fprintf(e.stderr, "wlc: %d error(s); fix them and run wlc vet again\n", r.Diags.Count(diag.Error))
		return errReported
	}
	return nil
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "wlc",
		Short: "Compile typed GPU benchmark workloads into CI jobs",
		Long: `wlc checks GPU benchmark workloads (vLLM server, benchmarks, accuracy evals)
written in typed CUE, in a second and on a laptop, and lowers them into
Buildkite pipelines, Slurm sbatch scripts and docker-run scripts.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Example: `  wlc vet workloads/
  wlc list
  wlc show qwen3_5_b200
  wlc export --backend buildkite --nightly`,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(
		newInitCmd(e),
		newVetCmd(e),
		newListCmd(e),
		newShowCmd(e),
		newExportCmd(e),
		newRecipeCmd(e),
		newImportCmd(e),
		newIngestCmd(e),
		newVersionCmd(e),
	)
	return root
}

// Main runs wlc with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cwd, _ := os.Getwd()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, envList: os.Environ, cwd: cwd}
	root := newRoot(e)
	root.SetArgs(args)
	err := root.Execute()
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errReported):
		return exitInvalid
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "wlc: %s\nRun 'wlc --help' for usage.\n", ue.msg)
		return exitUsage
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"), strings.Contains(err.Error(), "accepts "), strings.Contains(err.Error(), "requires "):
		fmt.Fprintf(stderr, "wlc: %s\nRun 'wlc --help' for usage.\n", err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "wlc: %s\n", err)
		return exitInvalid
	}
}

const defaultWorkloadsDir = "workloads"
