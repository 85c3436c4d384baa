package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/wlcdev/wlc/internal/testenv"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"wlc": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs the CLI archives in testdata/script, named
// <cmd>_<case>.txtar. Each archive carries a cue.mod and workloads; the
// schema comes from the binary. WLC_UPDATE=1 rewrites the expected output.
//
// Archives can use:
//
//	$REPO    the checkout root (e.g. to copy the bundled workloads)
//	$SHARED  ../shared when present ([shared] condition)
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
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "shared":
				_, err := os.Stat(shared)
				return err == nil, nil
			}
			return false, nil
		},
	})
}
