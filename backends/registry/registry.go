// Package registry is the explicit list of backends `wlc export` offers.
// Adding a backend is one line here; there is no init() registration.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/slurm"
)

// All returns every backend, sorted by name.
func All() []backends.Backend {
	bs := []backends.Backend{
		// Backends are listed here, one per line.
		docker.Backend{},
		native.Backend{},
		slurm.Backend{},
	}
	// buildkite steps run the scripts of the runner backends listed above.
	bs = append(bs, buildkite.New(runners(bs)))
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name() < bs[j].Name() })
	return bs
}

// runners are the backends whose per-workload script a Buildkite step runs
// (docker, native, slurm); buildkite refuses profiles whose runner is absent.
func runners(bs []backends.Backend) map[string]backends.Backend {
	m := map[string]backends.Backend{}
	for _, b := range bs {
		switch n := b.Name(); n {
		case buildkite.RunnerDocker, buildkite.RunnerNative, buildkite.RunnerSlurm:
			m[n] = b
		}
	}
	return m
}

// Names lists the valid --backend values.
func Names() []string {
	var out []string
	for _, b := range All() {
		out = append(out, b.Name())
	}
	return out
}

// Lookup finds a backend by name; the error lists the valid names.
func Lookup(name string) (backends.Backend, error) {
	for _, b := range All() {
		if b.Name() == name {
			return b, nil
		}
	}
	return nil, fmt.Errorf("unknown backend %q; valid backends: %s", name, strings.Join(Names(), ", "))
}
