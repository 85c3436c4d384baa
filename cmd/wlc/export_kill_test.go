//go:build linux || darwin

package main

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExportKilled kills `wlc export -o DIR` of 300 workloads with SIGKILL
// at random points (anywhere in the run; while staging; just after the
// swap, while the previous set is removed) and checks after each kill that
// DIR holds the previous set or the new one exactly (file names and
// contents), never a mix and nothing else. WLC_KILL_ITERATIONS sets the
// number of kills (default 12, 6 with -short). The two
// workload versions differ in every script and in one file name, and
// alternate, so both directions of the swap are tried. A last complete
// export must sweep what the killed ones left beside DIR.
func TestExportKilled(t *testing.T) {
	iterations := 12
	if s := os.Getenv("WLC_KILL_ITERATIONS"); s != "" {
		iterations, _ = strconv.Atoi(s)
	} else if testing.Short() {
		iterations = 6
	}
	wlc, err := exec.LookPath("wlc") // the test binary, installed by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "cue.mod/module.cue"), "module: \"github.com/wlcdev/wlc@v0\"\nlanguage: version: \"v0.17.1\"\n")
	versions := []string{"a", "b"}
	for _, v := range versions {
		write(filepath.Join(root, v, "wlc.cue"), `package workloads

import "github.com/wlcdev/wlc/schema"

profiles: [Name=string]: schema.#Profile & {name: Name}
workloads: [Name=string]: W={schema.#Workload & {name: Name, #profile: profiles[W.profile].#facts, #profileNames: _profileNames}}
_profileNames: [for name, _ in profiles {name}]
profiles: H200: {hardware: "H200", runtime: "docker", queue: "H200", docker: {}}
`)
		for i := 1; i <= 300; i++ {
			name := fmt.Sprintf("w%03d", i)
			if i == 300 {
				name += "_" + v // one file name differs between the sets
			}
			write(filepath.Join(root, v, name+".cue"), fmt.Sprintf(`package workloads

workloads: %s: {
	profile:       "H200"
	gpus_per_node: 1
	model:         "Qwen/Qwen3-8B"
	precision:     "bf16"
	env: SET: %q
	lm_eval: tasks: [{name: "gsm8k"}]
}
`, name, v))
		}
	}
	outParent := filepath.Join(root, "exports")
	out := filepath.Join(outParent, "out")
	export := func(v string) *exec.Cmd {
		cmd := exec.Command(wlc, "export", "--backend", "docker", "-o", out, filepath.Join(root, v))
		cmd.Dir = root
		return cmd
	}

	// The sets each version writes, and how long an export takes until
	// staging starts and until it ends.
	sets := map[string]map[string]string{"": nil} // "": no directory yet
	var toStage, toEnd time.Duration
	for _, v := range versions {
		begin := time.Now()
		r := start(t, export(v))
		staged := r.waitStage(outParent, nil)
		if <-r.done; r.err != nil {
			t.Fatalf("export %s: %v", v, r.err)
		}
		toStage, toEnd = staged.Sub(begin), time.Since(begin)
		sets[v] = readSet(t, out)
		if n := len(sets[v]); n != 301 { // 300 scripts and the marker
			t.Fatalf("set %s has %d files, want 301", v, n)
		}
	}
	t.Logf("an export: %v until staging, %v in all", toStage.Round(time.Millisecond), toEnd.Round(time.Millisecond))
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}

	held := "" // the set DIR holds
	outcomes := map[string]int{}
	for i := range iterations {
		next := versions[i%2]
		if next == held {
			next = versions[(i+1)%2]
		}
		before := stages(outParent) // left by earlier kills
		r := start(t, export(next))
		var how string
		switch i % 3 {
		case 0:
			// Anywhere in the run.
			d := time.Duration(rand.Int64N(int64(toEnd)))
			time.Sleep(d)
			how = "anywhere"
		case 1:
			// While staging: soon after the staging directory appears.
			// The measured window (toEnd - toStage) shrinks as the
			// caches warm, so a kill drawn from all of it often came
			// after the export had finished; a quarter of it, at most
			// 20 ms, lands while the set is still being written.
			r.waitStage(outParent, before)
			time.Sleep(time.Duration(rand.Int64N(int64(min(max((toEnd-toStage)/4, time.Millisecond), 20*time.Millisecond)))))
			how = "staging"
		case 2:
			// Just after the swap, while the previous set is removed.
			r.waitSwap(out)
			time.Sleep(time.Duration(rand.Int64N(int64(2 * time.Millisecond))))
			how = "swapped"
		}
		r.cmd.Process.Kill()
		<-r.done
		err := r.err
		got := readSet(t, out)
		switch {
		case maps.Equal(got, sets[held]):
			outcomes[how+"/old"]++
		case maps.Equal(got, sets[next]):
			outcomes[how+"/new"]++
			held = next
		default:
			t.Fatalf("kill %d (%s, exit %v): %s holds neither the previous set (%s) nor the new one (%s): %s", i, how, err, out, held, next, describe(got, sets[held], sets[next]))
		}
		if err == nil {
			outcomes[how+"/finished first"]++
		}
		if len(stages(outParent)) > 0 {
			outcomes[how+"/staging left beside"]++
		}
	}
	t.Logf("%d kills: %v", iterations, outcomes)
	if outcomes["staging/staging left beside"] == 0 && iterations >= 6 {
		t.Errorf("no kill landed while staging: %v", outcomes)
	}

	final := versions[0]
	if held == final {
		final = versions[1]
	}
	if b, err := export(final).CombinedOutput(); err != nil {
		t.Fatalf("final export: %v\n%s", err, b)
	}
	if got := readSet(t, out); !maps.Equal(got, sets[final]) {
		t.Fatalf("after the final export: %s", describe(got, sets[held], sets[final]))
	}
	ents, _ := os.ReadDir(outParent)
	if len(ents) != 1 {
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		t.Errorf("beside %s after a complete export: %v, want nothing", out, n)
	}
}

// run is a started export.
type run struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func start(t *testing.T, cmd *exec.Cmd) *run {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &run{cmd: cmd, done: make(chan struct{})}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	return r
}

// waitStage returns when a staging directory not in before appears beside
// the output, or the export has ended.
func (r *run) waitStage(parent string, before []string) time.Time {
	for {
		for _, s := range stages(parent) {
			if !slices.Contains(before, s) {
				return time.Now()
			}
		}
		select {
		case <-r.done:
			return time.Now()
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// waitSwap returns when dir is no longer the directory it was (the swap
// happened), or the export has ended.
func (r *run) waitSwap(dir string) {
	before, _ := os.Stat(dir)
	for {
		if now, err := os.Stat(dir); err == nil && (before == nil || !os.SameFile(before, now)) {
			return
		}
		select {
		case <-r.done:
			return
		default:
			time.Sleep(100 * time.Microsecond)
		}
	}
}

func stages(parent string) []string {
	ents, _ := os.ReadDir(parent)
	var s []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".wlc-stage-") {
			s = append(s, e.Name())
		}
	}
	return s
}

// readSet is every file under dir, path → content; nil when dir is absent.
func readSet(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// describe says how got differs from the two sets, briefly.
func describe(got, old, new map[string]string) string {
	diff := func(want map[string]string) string {
		var extra, missing, changed int
		for k, v := range got {
			if w, ok := want[k]; !ok {
				extra++
			} else if w != v {
				changed++
			}
		}
		for k := range want {
			if _, ok := got[k]; !ok {
				missing++
			}
		}
		return fmt.Sprintf("%d extra, %d missing, %d changed", extra, missing, changed)
	}
	return fmt.Sprintf("%d files; against the previous set %s; against the new set %s", len(got), diff(old), diff(new))
}
