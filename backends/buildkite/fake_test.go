package buildkite_test

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// fakeRunner stands in for a runner backend that is not wired yet. Its
// script uses every `$` form a real script does (plain and braced
// references, defaults, array lengths, command substitution, arithmetic),
// single and double quotes, and the workload's env, so the goldens prove the
// script survives upload. With WLC_FAKE_OUT set it records what it saw.
type fakeRunner struct{ name string }

func (f fakeRunner) Name() string    { return f.name }
func (f fakeRunner) Summary() string { return "fake " + f.name + " runner for tests" }

func (f fakeRunner) Lower(ws []plan.Workload, _ backends.Options) ([]backends.Artifact, error) {
	if len(ws) != 1 {
		return nil, fmt.Errorf("fake runner lowers one workload at a time, got %d", len(ws))
	}
	w := ws[0]
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# fake %s runner script for %s (tests only)\nset -euo pipefail\n", f.name, w.Name)
	for _, e := range w.Env {
		fmt.Fprintf(&b, "export %s=%s\n", e.Name, sq(e.Value))
	}
	fmt.Fprintf(&b, "image=%s\n", sq(w.Image.Ref))
	b.WriteString(`A=(one "two words" 'three')
results="${WLC_RESULTS_ROOT:-results}/` + w.Name + `"
echo "it's ${#A[@]} items; X=${X:-y} HOME=$HOME pid=$$ now=$(date +%s) sum=$((1+2)) image=${image##*:}"
if [ -n "${WLC_FAKE_OUT:-}" ]; then
  {
    printf 'A=%s\n' "${#A[@]}"
    printf 'X=%s\n' "${X:-y}"
    printf 'results=%s\n' "$results"
`)
	for _, e := range w.Env {
		fmt.Fprintf(&b, "    printf '%%s=%%s\\n' %s \"$%s\"\n", e.Name, e.Name)
	}
	b.WriteString("  } > \"$WLC_FAKE_OUT\"\nfi\n")
	return []backends.Artifact{{Path: w.Name + ".sh", Data: []byte(b.String()), Mode: 0o755}}, nil
}

func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// goldenRunners are the runners the goldens use: the real backend where
// the registry has one, the fake otherwise. When a runner backend lands the
// goldens change (regenerate them with WLC_UPDATE=1 and read the diff).
func goldenRunners() map[string]backends.Backend {
	m := map[string]backends.Backend{}
	for _, name := range []string{"docker", "native", "slurm"} {
		if b, err := registry.Lookup(name); err == nil {
			m[name] = b
		} else if name != "slurm" {
			// No fake Slurm runner: without the real one, Slurm profiles are
			// refused, and the goldens hold no Slurm step.
			m[name] = fakeRunner{name}
		}
	}
	return m
}

func fakeRunners() map[string]backends.Backend {
	return map[string]backends.Backend{"docker": fakeRunner{"docker"}, "native": fakeRunner{"native"}, "slurm": fakeRunner{"slurm"}}
}

// fakeSplitter is a fake runner whose scripts ship split (runner.Splitter)
// as the docker and native runners' do: the script sources a shared
// runtime from runtimeDir beside it and calls the function it defines,
// which says so on stdout.
type fakeSplitter struct{ fakeRunner }

// fakeRuntimeRan is what the fake runtime's function prints.
const fakeRuntimeRan = "wlc fake: the shared runtime ran"

func (f fakeSplitter) Split(w plan.Workload, runtimeDir string) (runner.Split, error) {
	arts, err := f.Lower([]plan.Workload{w}, backends.Options{})
	if err != nil {
		return runner.Split{}, err
	}
	data := []byte(runner.RuntimeHeader + "fake_shared() { echo '" + fakeRuntimeRan + "'; }\n")
	rt := &runner.SharedRuntime{Name: "runtime-fake-" + f.name + ".sh", Data: data, Sum: sha256.Sum256(data)}
	line, err := runner.SourceLine(runtimeDir + "/" + rt.Name)
	if err != nil {
		return runner.Split{}, err
	}
	head, tail, _ := strings.Cut(string(arts[0].Data), "set -euo pipefail\n")
	return runner.Split{Job: []byte(head + "set -euo pipefail\n" + line + "fake_shared\n" + tail), Runtime: rt}, nil
}
