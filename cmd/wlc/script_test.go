package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// cueVersion is the cuelang.org/go version this binary is built with (the
// one go.mod pins).
func cueVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "cuelang.org/go" {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

// servers are the ingest servers of running scripts.
var servers sync.Map

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"wlc": func() { os.Exit(Process()) },
	})
}

// TestScript runs the CLI archives in testdata/script, named
// <cmd>_<case>.txtar. Each archive carries a cue.mod and workloads; the
// schema comes from the binary. WLC_UPDATE=1 rewrites the expected output.
//
// Archives can use:
//
//	$REPO         the checkout root (e.g. to copy the bundled workloads)
//	$SHARED       ../shared when present ([shared] condition)
//	$CUE_VERSION  the cuelang.org/go version go.mod pins ([cue] condition:
//	              the plain cue CLI at that version is on PATH; in CI its
//	              absence fails the script instead of skipping it)
func TestScript(t *testing.T) {
	repo := testenv.RepoRoot(t)
	shared := os.Getenv("WLC_SHARED")
	if shared == "" {
		shared = filepath.Join(repo, "..", "shared")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join(repo, "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("WLC_UPDATE") == "1",
		Setup: func(env *testscript.Env) error {
			if _, err := os.Stat(shared); err != nil && testenv.InCI() {
				return fmt.Errorf("CI must not skip: ../shared is absent (%v)", err)
			}
			env.Setenv("REPO", repo)
			env.Setenv("SHARED", shared)
			env.Setenv("CUE_VERSION", cueVersion())
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// ingest-server TOKEN: a local ingest server (loopback), the
			// job's variables pointed at it.
			"ingest-server": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: ingest-server TOKEN")
				}
				s := ingesttest.Start(args[0])
				ts.Defer(s.Close)
				servers.Store(ts, s)
				ts.Setenv("PERF_INGEST_URL", s.PerfURL())
				ts.Setenv("INGEST_URL", s.EvalURL())
			},
			// ingest-rows perf|eval|refused N: the server accepted (or
			// refused) N rows.
			"ingest-rows": func(ts *testscript.TestScript, neg bool, args []string) {
				v, ok := servers.Load(ts)
				if !ok || len(args) != 2 {
					ts.Fatalf("usage: ingest-rows perf|eval|refused N, after ingest-server")
				}
				s := v.(*ingesttest.Server)
				n := len(s.Refused())
				if args[0] != "refused" {
					n = len(s.Rows(args[0]))
				}
				if got := fmt.Sprint(n); (got == args[1]) == neg {
					ts.Fatalf("%s rows: %s, want %s (refused: %q)", args[0], got, args[1], s.Refused())
				}
			},
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "shared":
				_, err := os.Stat(shared)
				return err == nil, nil
			case "cue":
				out, err := exec.Command("cue", "version").Output()
				have := strings.HasPrefix(string(out), "cue version "+cueVersion()+"\n")
				if !have && testenv.InCI() {
					return false, fmt.Errorf("CI must not skip: cue %s is not on PATH (%v; .ci/setup.d/40-wlcbench.sh installs it)", cueVersion(), err)
				}
				return have, nil
			}
			return false, nil
		},
	})
}
