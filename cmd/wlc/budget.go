package main

import (
	"fmt"
	"math"
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
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		switch n := v * float64(u.mult); {
		case err != nil || math.IsNaN(v) || v < 0:
			return fmt.Errorf("%q is not a size; write e.g. 2GiB, 512MiB or 0 for no limit", s)
		case n >= maxBudgetBytes:
			return fmt.Errorf("%q is over the largest budget, 1 EiB; write e.g. 2GiB, or 0 for no limit", s)
		case v > 0 && n < 1:
			// 0 is no limit: a tiny budget must not become none.
			return fmt.Errorf("%q is less than a byte, and 0 means no limit; write e.g. 512MiB", s)
		default:
			*f.n = uint64(n)
			return nil
		}
	}
	return nil
}

// maxBudgetBytes bounds --max-memory (1 EiB: above it the float product
// no longer converts to a uint64 exactly, and no machine has it).
const maxBudgetBytes = 1 << 60

// durationFlag is --timeout: a Go duration, 0 for no limit. Negative
// durations are refused, as negative sizes are (pflag's own duration flag
// takes -5s, and the budget then read it as "no limit").
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a duration; write e.g. 90s, 5m or 0 for no limit", s)
	case d < 0:
		return fmt.Errorf("%q is negative; write a duration such as 90s, or 0 for no limit", s)
	}
	*f.d = d
	return nil
}

func (durationFlag) Type() string { return "duration" }

func (sizeFlag) Type() string { return "size" }

func addBudgetFlags(fs *pflag.FlagSet, l *budget.Limits) {
	l.Memory, l.Time = defaultMaxMemory, defaultTimeout
	fs.Var(sizeFlag{&l.Memory}, "max-memory", "stop evaluating the package when the heap exceeds this (0: no limit)")
	fs.Var(durationFlag{&l.Time}, "timeout", "stop evaluating the package after this long (0: no limit)")
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
