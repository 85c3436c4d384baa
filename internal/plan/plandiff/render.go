package plandiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Summary counts the entries by status, e.g. "1 changed, 1 added, 3
// unchanged"; "no job changed (3 unchanged)" when nothing did.
func (r *Report) Summary() string {
	var parts []string
	for _, s := range []Status{Changed, Added, Removed, Renamed, Unchanged} {
		if n := r.Count(s); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if r.Count(Unchanged) == len(r.Entries) {
		return fmt.Sprintf("no job changed (%d unchanged)", len(r.Entries))
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the report for a terminal: one line per job that is
// not unchanged, its changes indented under it, then the GPU-hours.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "wlc diff %s → %s: %s\n", r.Old, r.New, r.Summary())
	for _, e := range r.Entries {
		if e.Status == Unchanged {
			continue
		}
		b.WriteString("\n")
		switch e.Status {
		case Renamed:
			fmt.Fprintf(&b, "%-9s %s → %s  %s\n", e.Status, e.OldName, e.Name, e.NewHash)
		case Changed:
			fmt.Fprintf(&b, "%-9s %s  %s → %s\n", e.Status, e.Name, e.OldHash, e.NewHash)
		case Added:
			fmt.Fprintf(&b, "%-9s %s  %s\n", e.Status, e.Name, e.NewHash)
		case Removed:
			fmt.Fprintf(&b, "%-9s %s  %s\n", e.Status, e.Name, e.OldHash)
		}
		for _, c := range e.Changes {
			fmt.Fprintf(&b, "  %-9s %s\n", c.Area, changeText(c, plainValue))
		}
		if len(e.Artifacts) > 0 {
			fmt.Fprintf(&b, "  %-9s %s\n", "artifacts", artifactsText(e.Artifacts, plainValue))
		}
		if e.Cost != nil {
			fmt.Fprintf(&b, "  %-9s %s\n", "GPU-hours", costText(e.Cost))
		}
	}
	if t := r.GPUHours; t != nil {
		before, after, delta := t.texts()
		fmt.Fprintf(&b, "\nGPU-hours of the selection: %s → %s: %s\n", before, after, delta)
		for _, p := range t.Moved() {
			before, after, delta := p.texts()
			fmt.Fprintf(&b, "  profile %s: %s → %s: %s\n", p.Profile, before, after, delta)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report for a pull-request comment or
// `buildkite-agent annotate`: a table of the jobs that are not unchanged,
// then each changed job's changes in a collapsible section.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### wlc diff: %s\n\n", r.Summary())
	fmt.Fprintf(&b, "%s → %s\n\n", code(r.Old), code(r.New))
	listed := len(r.Entries) - r.Count(Unchanged)
	if listed > 0 {
		b.WriteString("| Job | Status | Hash | GPU-hours |\n|---|---|---|---|\n")
		for _, e := range r.Entries {
			if e.Status == Unchanged {
				continue
			}
			name, hash := code(e.Name), ""
			switch e.Status {
			case Renamed:
				name = code(e.OldName) + " → " + code(e.Name)
				hash = code(e.NewHash)
			case Changed:
				hash = code(e.OldHash) + " → " + code(e.NewHash)
			case Added:
				hash = code(e.NewHash)
			case Removed:
				hash = code(e.OldHash)
			}
			cost := ""
			if e.Cost != nil {
				cost = strings.ReplaceAll(cell(costText(e.Cost)), "|", `\|`)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, e.Status, hash, cost)
		}
		b.WriteString("\n")
	}
	if t := r.GPUHours; t != nil {
		before, after, delta := t.texts()
		fmt.Fprintf(&b, "**GPU-hours of the selection:** %s → %s: **%s**\n\n", before, after, delta)
		if moved := t.Moved(); len(moved) > 0 {
			b.WriteString("| Profile | GPU-hours before | after | change |\n|---|---|---|---|\n")
			for _, p := range moved {
				before, after, delta := p.texts()
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(p.Profile), before, after, delta)
			}
			b.WriteString("\n")
		}
	}
	for _, e := range r.Entries {
		if len(e.Changes) == 0 && len(e.Artifacts) == 0 {
			continue
		}
		what := string(e.Status)
		if e.Status == Changed {
			what = fmt.Sprintf("changed: %d change(s)", len(e.Changes))
		}
		fmt.Fprintf(&b, "<details><summary><code>%s</code> %s</summary>\n\n", htmlEscape(e.Name), what)
		if len(e.Changes) > 0 {
			b.WriteString("| Area | What | Change |\n|---|---|---|\n")
			for _, c := range e.Changes {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Area, code(c.Item), cell(valueChange(c, code)))
			}
			b.WriteString("\n")
		}
		if len(e.Artifacts) > 0 {
			fmt.Fprintf(&b, "Artifacts: %s\n\n", artifactsText(e.Artifacts, code))
		}
		b.WriteString("</details>\n\n")
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// changeText is "ITEM: OLD → NEW (why)", "ITEM added: NEW", "ITEM
// removed (was OLD)"; quote renders values.
func changeText(c Change, quote func(string) string) string {
	return c.Item + " " + valueChange(c, quote)
}

func valueChange(c Change, quote func(string) string) string {
	var s string
	switch c.Kind {
	case kindAdded:
		s = "added"
		if c.New != "" {
			s += ": " + quote(c.New)
		}
	case kindRemoved:
		s = "removed"
		if c.Old != "" {
			s += " (was " + quote(c.Old) + ")"
		}
	default:
		s = quote(c.Old) + " → " + quote(c.New)
	}
	if c.Why != "" {
		s += " (" + c.Why + ")"
	}
	return s
}

// plainValue shows a value in a terminal: one line, empty as "".
func plainValue(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"") {
		q, _ := json.Marshal(s)
		return string(q)
	}
	return s
}

func artifactsText(as []Artifact, quote func(string) string) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, a.Backend+" "+quote(a.Path)+" ("+a.Change+")")
	}
	return strings.Join(parts, ", ")
}

func costText(c *Cost) string {
	f := func(x *Figure) string {
		if x == nil {
			return "-"
		}
		gpus := fmt.Sprintf("%d GPUs", x.GPUs)
		if x.GPUs == 1 {
			gpus = "1 GPU"
		}
		return fmt.Sprintf("%s × %.2f h = %.2f (%s: %s)", gpus, x.Hours, x.GPUHours, x.Basis, x.From)
	}
	switch {
	case c.Old == nil:
		return f(c.New)
	case c.New == nil:
		return f(c.Old) + " → 0"
	case *c.Old == *c.New:
		return f(c.New) + ", as before"
	}
	return f(c.Old) + " → " + f(c.New)
}

// texts are t's two sides and its difference as the reports write them,
// each with its basis: "16.00 (estimated)", "+4.00 GPU-hours (estimated)".
func (t *Total) texts() (before, after, delta string) {
	return fmt.Sprintf("%.2f (%s)", t.Old, t.OldBasis), fmt.Sprintf("%.2f (%s)", t.New, t.NewBasis),
		fmt.Sprintf("%+.2f GPU-hours (%s)", t.Delta, t.DeltaBasis)
}

// code is s as a Markdown code span that survives a table cell: a fence
// longer than any backtick run in s, pipes escaped, line breaks as
// blanks.
func code(s string) string {
	if s == "" {
		return `""`
	}
	s = strings.NewReplacer("\r", " ", "\n", " ", "|", `\|`).Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// cell keeps text on one line, as a table cell must be (code spans in it
// have their pipes escaped already).
func cell(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
