package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/load/budget"
)

// Exit codes: 0 ok, 1 invalid input (already reported), 2 usage.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

// Commands return errors and never print them: Main prints every error
// (printError), and its type decides the exit code.

// errReported means the findings were printed (they are output, like vet's
// report); only the exit code is left.
var errReported = errors.New("reported")

// usageError is a command-line mistake: exit 2 with the message and a
// pointer to --help. Cobra's own argument and flag errors are made
// usageErrors where cobra reports them (typedUsage, SetFlagErrorFunc).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// commandError is a failure of one command (an empty selection, a file
// that cannot be written): exit 1, printed as "<cmd>: <err>".
type commandError struct {
	cmd string // e.g. "wlc export"
	err error
}

func (e commandError) Error() string { return e.cmd + ": " + e.err.Error() }
func (e commandError) Unwrap() error { return e.err }

// failf is a commandError of cmd.
func failf(cmd, format string, args ...any) error {
	return commandError{cmd, fmt.Errorf(format, args...)}
}

// env is what a command may touch of the outside world; tests inject it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	envList        func() []string
	cwd            string
	// ctx is the one cue.Context of this run.
	ctx *cue.Context
	// limits bound each evaluation (--max-memory, --timeout).
	limits budget.Limits
}

// loadWorkloads runs the loader once for the run and prints its findings.
// It returns the result even when it has errors, so vet can report and
// list/show can refuse.
func (e *env) loadWorkloads(dir string, o load.Options) (*load.Result, error) {
	if e.ctx == nil {
		e.ctx = cuecontext.New()
	}
	o.Vetters = vetters()
	return e.loadBounded(dir, o), nil
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
	addBudgetFlags(root.PersistentFlags(), &e.limits)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(
		newInitCmd(e),
		newVetCmd(e),
		newListCmd(e),
		newShowCmd(e),
		newExportCmd(e),
		newDiffCmd(e),
		newRecipeCmd(e),
		newImportCmd(e),
		newIngestCmd(e),
		newVersionCmd(e),
	)
	// Cobra adds help and completion at Execute; add them now so typedUsage
	// and Main's Find see them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	typedUsage(root)
	return root
}

// typedUsage makes every argument-count error cobra reports a usageError
// where it is made, so Main never classifies errors by their text.
// (Commands without an Args check accept anything, except an unknown
// command under the root, which cobra's Find reports: see Main.)
func typedUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err.Error()}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		typedUsage(sub)
	}
}

// Main runs wlc with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(&env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, envList: os.Environ}, args)
}

// Process runs wlc as the process itself (its own main, and the tests'
// wlc command): it tunes the collector.
func Process() int {
	// CUE's values are a large, pointer-rich live graph that every
	// collection re-marks: at Go's default (GOGC=100) a 1,000-workload
	// vet spent a quarter of its CPU marking. The sharded load keeps at
	// most GOMAXPROCS shards alive, so a heap four times the live one
	// stays small; --max-memory still caps it (budget.Run sets the memory
	// limit). GOGC in the environment wins. wlcbench at 1,000 workloads,
	// this build against one at GOGC=100 (5 interleaved repetitions, 2
	// CPUs, load average 1-2, medians): vet wall 0.81x, CPU 0.79x, peak
	// RSS 1.64x (210 against 125 MB); export wall 0.81x, CPU 0.81x, RSS
	// 1.49x.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
	// WLC_CPUPROFILE=FILE writes a CPU profile of the run (go tool pprof):
	// where a slow vet or export spends its time, on the user's package.
	if p := os.Getenv("WLC_CPUPROFILE"); p != "" {
		stop, err := startCPUProfile(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "wlc: WLC_CPUPROFILE=%s: cannot write the profile there: %v\n", p, err)
		} else {
			defer stop()
		}
	}
	return runWith(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, envList: os.Environ}, os.Args[1:])
}

// startCPUProfile profiles the process into file until stop.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func runWith(e *env, args []string) int {
	e.cwd, _ = os.Getwd()
	stderr := e.stderr
	root := newRoot(e)
	root.SetArgs(args)
	// Finding the command fails only for an unknown command (cobra's
	// check of a command without Args), a usage mistake by construction.
	// (Shell completion's hidden __complete command exists only once
	// Execute adds it.)
	complete := len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
	if _, _, err := root.Find(args); err != nil && !complete {
		return printError(stderr, usageError{err.Error()})
	}
	return printError(stderr, root.Execute())
}

// printError is wlc's one error printer: it prints err (unless it was
// reported already) and returns the exit code its type calls for.
func printError(stderr io.Writer, err error) int {
	var ue usageError
	var ce commandError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errReported):
		return exitInvalid
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "wlc: %s\nRun 'wlc --help' for usage.\n", ue.msg)
		return exitUsage
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "%s\n", ce.Error())
		return exitInvalid
	default:
		fmt.Fprintf(stderr, "wlc: %s\n", err)
		return exitInvalid
	}
}

const defaultWorkloadsDir = "workloads"
