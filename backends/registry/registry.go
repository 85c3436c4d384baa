// Package registry is the explicit list of backends `wlc export` offers.
// Adding a backend is one line here; there is no init() registration.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wlcdev/wlc/backends"
)

// All returns every backend, sorted by name.
func All() []backends.Backend {
	bs := []backends.Backend{
		// Backends are listed here, one per line.
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name() < bs[j].Name() })
	return bs
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
