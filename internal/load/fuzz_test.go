package load_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/load"
)

// FuzzLoad writes arbitrary bytes as a workload file into a package and
// loads it: the loader must never panic, and must return either workloads
// or findings; every finding about the fuzzed file carries a position, and
// no input takes 20 s.
func FuzzLoad(f *testing.F) {
	for _, c := range constraintCases {
		f.Add([]byte(workload(c.ok)))
		f.Add([]byte(workload(c.bad)))
	}
	f.Add([]byte("package workloads\n\nworkloads: w: {\n"))
	f.Add([]byte("package other\n"))
	f.Add([]byte("workloads: 1"))
	f.Add([]byte("package workloads\nimport \"strings\"\nworkloads: w: profile: strings.ToUpper(\"h200\")\n"))
	root := writePkg(f, nil)
	file := filepath.Join(root, "workloads", "w.cue")
	f.Fuzz(func(t *testing.T, data []byte) {
		// A fresh context per input: a cue.Context only grows.
		ctx := cuecontext.New()
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan *load.Result, 1)
		go func() { done <- load.Load(ctx, filepath.Join(root, "workloads"), root) }()
		var r *load.Result
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 2*time.Second {
				os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("wlc-fuzz-slow-%d.cue", d.Milliseconds())), data, 0o644)
			}
		}()
		select {
		case r = <-done:
		case <-time.After(20 * time.Second):
			os.WriteFile(filepath.Join(os.TempDir(), "wlc-fuzz-hang.cue"), data, 0o644)
			t.Fatalf("Load took over 20s on:\n%s", data)
		}
		for _, d := range r.Diags {
			if d.File == "workloads/w.cue" && d.Line == 0 {
				t.Errorf("finding without a line: %s", d)
			}
		}
	})
}
