package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cuelang.org/go/cue/cuecontext"
	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/load/budget"
)

// When the whole package outgrows the budget, CUE cannot say which value
// grows, and the evaluation cannot be stopped: it keeps its memory and
// its CPU. So wlc replaces itself (exec, same command line) with a
// process told, through envLocate, what was exceeded; that process
// evaluates each file alone, then ever shorter prefixes of the file that
// outgrows the budget on its own, each in a child it can kill, and
// reports the declaration where the growth starts, at its file:line:col.
const envLocate = "WLC_BUDGET_EXCEEDED"

// probeCmd is the child's command: `wlc __probe-budget -- FILE KEEP`
// prints "exceeded" when evaluating FILE's first KEEP declarations alone
// (KEEP < 0: all) spends the budget.
const probeCmd = "__probe-budget"

// relocate replaces the process with a fresh run of the same command that
// locates the growth; it returns only when it cannot (no exec, e.g. in
// unit tests, or already locating).
func (e *env) relocate(ex *budget.Exceeded) {
	if e.exec == nil || e.getenv(envLocate) != "" {
		return
	}
	data, err := json.Marshal(ex)
	if err != nil {
		return
	}
	e.exec(append(e.envList(), envLocate+"="+string(data)))
}

// located is the finding of a relocated run: the declaration where the
// package's growth starts, or the package dir when no file grows alone.
func (e *env) located(dir string) *load.Result {
	var ex budget.Exceeded
	res := &load.Result{}
	if err := json.Unmarshal([]byte(e.getenv(envLocate)), &ex); err != nil {
		res.Diags.Errorf(dir, 0, 0, "", "%s holds %q, which wlc did not write; unset it", envLocate, e.getenv(envLocate))
		return res
	}
	os.Unsetenv(envLocate) // the probes are plain runs
	files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	sort.Strings(files)
	for _, f := range files {
		decls, err := load.Decls(f)
		if err != nil || !e.probe(f, -1, ex.Limits) {
			continue
		}
		// The shortest prefix of f that spends the budget ends with the
		// declaration where the growth starts (a prefix keeps what
		// later declarations refer to).
		lo, hi := 0, len(decls) // prefix lo fits; prefix hi exceeds
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if e.probe(f, mid, ex.Limits) {
				hi = mid
			} else {
				lo = mid
			}
		}
		if hi == 0 || hi > len(decls) {
			break
		}
		d := decls[hi-1]
		ex.At = budget.At{File: f, What: d.Label}
		res.Diags.Errorf(rel(e.cwd, d.Pos.Filename), d.Pos.Line, d.Pos.Column, "", "%v", &ex)
		return res
	}
	res.Diags.Errorf(dir, 0, 0, "", "%v (no file of it grows alone: the growth spans files)", &ex)
	return res
}

// probe evaluates the first keep declarations of file alone in a child
// process and reports whether the child spent the budget (or had to be
// killed past it).
func (e *env) probe(file string, keep int, l budget.Limits) (over bool) {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	args := []string{probeCmd, "--max-memory", strconv.FormatUint(l.Memory, 10), "--timeout", l.Time.String(), "--", file, strconv.Itoa(keep)}
	cmd := exec.Command(self, args...)
	cmd.Args[0] = os.Args[0] // the same program, under the same name
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var kill <-chan time.Time
	if l.Time > 0 {
		t := time.NewTimer(l.Time + 10*time.Second)
		defer t.Stop()
		kill = t.C
	}
	select {
	case <-done:
	case <-kill:
		cmd.Process.Kill()
		<-done
		return true
	}
	return strings.TrimSpace(out.String()) == "exceeded"
}

func newProbeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    probeCmd + " FILE KEEP",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			keep, err := strconv.Atoi(args[1])
			if err != nil {
				return usagef("KEEP %q is not a number", args[1])
			}
			if budget.Run(e.limits, nil, func() { load.EvalAlone(cuecontext.New(), args[0], keep) }) != nil {
				fmt.Fprintln(e.stdout, "exceeded")
			}
			return nil
		},
	}
}

// execSelf replaces the process with the same program and arguments under
// env (syscall.Exec frees the runaway evaluation's memory at once).
func execSelf(env []string) {
	if self, err := os.Executable(); err == nil {
		syscall.Exec(self, os.Args, env)
	}
}

func rel(cwd, file string) string {
	if r, err := filepath.Rel(cwd, file); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return file
}
