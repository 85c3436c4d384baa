package check

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wlcdev/wlc/internal/diag"
)

// Served is a workload with a fixed server port as the port rule sees it.
type Served struct {
	Name string
	Port int
	// Pool names the hosts its jobs may run on: jobs of one pool can
	// share a host (a Buildkite queue, or a Slurm partition).
	Pool string
	// GPUs is what a job holds on each of its hosts, of HostGPUs.
	GPUs, HostGPUs int
	// Exclusive jobs hold their hosts alone (Slurm --exclusive).
	Exclusive bool
	// Where the workload is defined: the first in source order keeps the
	// port.
	File string
	Line int
}

// Ports refuses two workloads that fix one server port and whose jobs
// can run on one host at once: same pool, neither exclusive, and both
// fit on a host's GPUs together. The second to start would find the port
// taken and stop (a shared port would mix two servers' answers into one
// benchmark), so the clash is caught here, not on a GPU host. Each
// workload after the first is refused, naming the one before it; the
// result maps its name to the finding on its port field.
func Ports(ws []Served) map[string]Diagnostic {
	order := slices.Clone(ws)
	slices.SortStableFunc(order, func(a, b Served) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Name, b.Name))
	})
	refused := map[string]Diagnostic{}
	for i, w := range order {
		if w.Port == 0 || w.Exclusive {
			continue
		}
		for _, prev := range order[:i] {
			if prev.Port != w.Port || prev.Pool != w.Pool || prev.Exclusive || prev.GPUs+w.GPUs > w.HostGPUs {
				continue
			}
			refused[w.Name] = Diagnostic{Path: "port", Severity: diag.Error, Message: fmt.Sprintf(
				"port %d is also the port of workload %s (%s), and both jobs run on %s, where one host can hold both (%d + %d of %d GPUs): the second to start would find the port taken; remove port (each job then picks a free port of its own) or give one of them another port",
				w.Port, prev.Name, prev.File, w.Pool, prev.GPUs, w.GPUs, w.HostGPUs)}
			break
		}
	}
	return refused
}
