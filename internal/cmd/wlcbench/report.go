package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

type key struct {
	tool string
	n    int
}

type results struct {
	ns      []int
	reps    int
	tools   []tool
	samples map[key][]sample // in repetition order
}

// metric reads one number of a sample.
type metric struct {
	name string
	get  func(sample) float64
}

var (
	wallM = metric{"wall", func(s sample) float64 { return s.wall.Seconds() }}
	cpuM  = metric{"CPU", func(s sample) float64 { return s.cpu.Seconds() }}
	rssM  = metric{"peak RSS", func(s sample) float64 { return float64(s.rssKiB) / 1024 }}
)

func values(ss []sample, m metric) []float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = m.get(s)
	}
	return v
}

func minOf(v []float64) float64 { return slices.Min(v) }

// median of v; the mean of the middle two for an even count.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratios are the per-repetition ratios num/den: both ran in the same
// repetition, seconds apart, so they saw the same machine.
func ratios(num, den []float64) []float64 {
	r := make([]float64, 0, len(num))
	for i := range min(len(num), len(den)) {
		if den[i] > 0 {
			r = append(r, num[i]/den[i])
		}
	}
	return r
}

func fmtRatio(r []float64) string {
	if len(r) == 0 {
		return "-"
	}
	if len(r) == 1 {
		return fmt.Sprintf("%.2f", r[0])
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(r), slices.Min(r), slices.Max(r))
}

// pairs are the comparisons the issue asks for, numerator first.
var pairs = [][2]string{
	{"wlc vet", "cue vet -c"},
	{"wlc export", "cue export"},
	{"wlc export", "generate_pipeline.py"},
	{"wlc vet", "base wlc vet"},
	{"wlc export", "base wlc export"},
}

// maxFloorKiB is the highest RSS floor of any run (see lowerOwnPeak).
func (r *results) maxFloorKiB() int64 {
	var m int64
	for _, ss := range r.samples {
		for _, s := range ss {
			m = max(m, s.floor)
		}
	}
	return m
}

func (r *results) has(tool string) bool {
	for _, t := range r.tools {
		if t.name == tool {
			return true
		}
	}
	return false
}

func (r *results) write(w io.Writer) {
	// Right-aligned numbers; tool names padded to one width stay left-aligned.
	width := len("tool")
	for _, t := range r.tools {
		width = max(width, len(t.name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tN\twall min\twall med\tCPU min\tCPU med\tCPU/workload\tRSS min\tRSS med\tout/workload\t\n", width, "tool")
	for _, t := range r.tools {
		for _, n := range r.ns {
			ss := r.samples[key{t.name, n}]
			wall, cpu, rss := values(ss, wallM), values(ss, cpuM), values(ss, rssM)
			out := "-"
			if t.export {
				out = fmt.Sprintf("%.1f KB", float64(ss[0].outLen)/1024/float64(n))
			}
			fmt.Fprintf(tw, "%-*s\t%d\t%.2f s\t%.2f s\t%.2f s\t%.2f s\t%.2f ms\t%.0f MB\t%.0f MB\t%s\t\n",
				width, t.name, n, minOf(wall), median(wall), minOf(cpu), median(cpu),
				median(cpu)/float64(n)*1000, minOf(rss), median(rss), out)
		}
	}
	tw.Flush()

	header := false
	for _, p := range pairs {
		if !r.has(p[0]) || !r.has(p[1]) {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nratios: median of the %d per-repetition ratios (min–max)\n", r.reps)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "\tN\twall\tCPU\tpeak RSS")
			header = true
		}
		for _, n := range r.ns {
			num, den := r.samples[key{p[0], n}], r.samples[key{p[1], n}]
			fmt.Fprintf(tw, "%s / %s\t%d", p[0], p[1], n)
			for _, m := range []metric{wallM, cpuM, rssM} {
				fmt.Fprintf(tw, "\t%s", fmtRatio(ratios(values(num, m), values(den, m))))
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()

	first := true
	for _, n := range r.ns {
		if !slices.Contains(r.ns, 2*n) {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nscaling: time(2N)/time(N), median of the per-repetition ratios (min–max); linear is 2.00\n")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "\t2N/N\twall\tCPU\tpeak RSS")
			first = false
		}
		for _, t := range r.tools {
			small, big := r.samples[key{t.name, n}], r.samples[key{t.name, 2 * n}]
			fmt.Fprintf(tw, "%s\t%d/%d", t.name, 2*n, n)
			for _, m := range []metric{wallM, cpuM, rssM} {
				fmt.Fprintf(tw, "\t%s", fmtRatio(ratios(values(big, m), values(small, m))))
			}
			fmt.Fprintln(tw)
		}
	}
	if !first {
		tw.Flush()
	}
	r.writeGoals(w)
}

// writeGoals compares the medians with issue 39's targets (the bars
// wlc's speed must still clear once the speed plumbing that did not pay
// is gone), where the run measured what a target needs.
func (r *results) writeGoals(w io.Writer) {
	const n = 1000
	if !slices.Contains(r.ns, n) {
		return
	}
	medRatio := func(a, b string, m metric) float64 {
		return median(ratios(values(r.samples[key{a, n}], m), values(r.samples[key{b, n}], m)))
	}
	type goal struct {
		what  string
		tools []string // measured by the run, or the goal is left out
		got   func() float64
		limit float64
	}
	goals := []goal{
		{"wlc vet / cue vet -c wall", []string{"wlc vet", "cue vet -c"}, func() float64 { return medRatio("wlc vet", "cue vet -c", wallM) }, 0.65},
		{"wlc export / generate_pipeline.py CPU", []string{"wlc export", "generate_pipeline.py"}, func() float64 {
			return medRatio("wlc export", "generate_pipeline.py", cpuM)
		}, 0.7},
	}
	goals = slices.DeleteFunc(goals, func(g goal) bool {
		return slices.ContainsFunc(g.tools, func(t string) bool { return !r.has(t) })
	})
	if len(goals) == 0 {
		return
	}
	fmt.Fprintf(w, "\nissue 39 goals at N=%d (medians of the per-repetition ratios)\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range goals {
		got := g.got()
		verdict := "met"
		if got > g.limit {
			verdict = "not met"
		}
		fmt.Fprintf(tw, "%s\t%.2f×\t≤ %.2f×\t%s\n", g.what, got, g.limit, verdict)
	}
	tw.Flush()
}
