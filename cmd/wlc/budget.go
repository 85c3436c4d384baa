package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/load/budget"
)

// Default budgets of one evaluation: the bundled workloads take about a
// second and 200 MiB; a 2,000-workload package a few seconds.
const (
	defaultMaxMemory = 2 << 30
	defaultTimeout   = 60 * time.Second
)

// sizeFlag is a byte count written as 2GiB, 512MiB, 1G or bytes.
type sizeFlag struct{ n *uint64 }

func (f sizeFlag) String() string {
	if f.n == nil {
		return ""
	}
	switch n := *f.n; {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	default:
		return strconv.FormatUint(n, 10)
	}
}

func (f sizeFlag) Set(s string) error {
	units := []struct {
		suffix string
		mult   uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}, {"B", 1}, {"", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("%q is not a size; write e.g. 2GiB, 512MiB or 0 for no limit", s)
			}
			*f.n = uint64(v * float64(u.mult))
			return nil
		}
	}
	return nil
}

func (sizeFlag) Type() string { return "size" }

func addBudgetFlags(fs *pflag.FlagSet, l *budget.Limits) {
	l.Memory, l.Time = defaultMaxMemory, defaultTimeout
	fs.Var(sizeFlag{&l.Memory}, "max-memory", "stop evaluating the package when the heap exceeds this (0: no limit)")
	fs.DurationVar(&l.Time, "timeout", l.Time, "stop evaluating the package after this long (0: no limit)")
}

// loadBounded runs the loader within the run's budget. Past it, the
// result is one error naming the flag to raise and what was being
// evaluated (a workload and its file, else the shard or the package the
// loader was building); the evaluation goroutine cannot be stopped, so
// the command returns and wlc exits.
func (e *env) loadBounded(dir string, o load.Options) *load.Result {
	var p budget.Progress
	o.Progress = &p
	var r *load.Result
	err := budget.Run(e.limits, &p, func() { r = load.Load(e.ctx, dir, e.cwd, o) })
	if err == nil {
		return r
	}
	res := &load.Result{}
	file := ""
	if ex, ok := err.(*budget.Exceeded); ok {
		file = ex.At.File
	}
	res.Diags.Errorf(file, 0, 0, "", "%v", err)
	return res
}
