package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// readmeMaxLines keeps README.md something a newcomer reads to the end;
// a topic that needs more room gets its own page in docs/.
const readmeMaxLines = 300

// TestDocs keeps README.md short, every relative link of README.md and
// docs/*.md pointing at a file (and heading) that exists, and every page
// of docs/ reachable from README.md.
func TestDocs(t *testing.T) {
	repo := testenv.RepoRoot(t)
	readme := filepath.Join(repo, "README.md")
	pages, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md in %s (%v)", repo, err)
	}
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page in docs/ and link it", n, readmeMaxLines)
	}

	linked := map[string]bool{}
	for _, file := range append([]string{readme}, pages...) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, file)
		for _, l := range markdownLinks(string(src)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			path := file // a bare #anchor is in this file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), filepath.FromSlash(target))
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist; fix the path or drop the link", rel, l.line, l.target, target)
				continue
			}
			if file == readme {
				linked[path] = true
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s:%d: link %q: only Markdown files have headings to link to", rel, l.line, l.target)
				continue
			}
			dst, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if anchors := headingAnchors(string(dst)); !anchors[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s; its anchors: %s", rel, l.line, l.target, target, anchor, strings.Join(sortedKeys(anchors), ", "))
			}
		}
	}
	for _, p := range pages {
		if !linked[p] {
			rel, _ := filepath.Rel(repo, p)
			t.Errorf("%s is not linked from README.md: add it to the README's documentation table", rel)
		}
	}
}

// TestReadmeVetExample runs the README's example workload through `wlc
// vet` beside the bundled workloads and requires the README to show what
// wlc prints, so the first thing a newcomer reads is real.
func TestReadmeVetExample(t *testing.T) {
	repo := testenv.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	exampleMarker := regexp.MustCompile(`<!-- docs-test: vet-example (\S+) -->`)
	m := exampleMarker.FindStringSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no %q marker before its vet example", "<!-- docs-test: vet-example FILE -->")
	}
	file := m[1]
	example, ok := fencedAfter(readme, m[0])
	if !ok {
		t.Fatalf("README.md: no fenced block after %s", m[0])
	}
	const outputMarker = "<!-- docs-test: vet-output -->"
	want, ok := fencedAfter(readme, outputMarker)
	if !ok {
		t.Fatalf("README.md: no fenced block after %s", outputMarker)
	}

	dir := t.TempDir()
	testenv.CopyFile(t, filepath.Join(repo, "cue.mod", "module.cue"), filepath.Join(dir, "cue.mod", "module.cue"))
	bundled, err := filepath.Glob(filepath.Join(repo, "workloads", "*.cue"))
	if err != nil || len(bundled) == 0 {
		t.Fatalf("no bundled workloads (%v)", err)
	}
	for _, f := range bundled {
		testenv.CopyFile(t, f, filepath.Join(dir, "workloads", filepath.Base(f)))
	}
	testenv.WriteFiles(t, dir, map[string]string{file: example})
	t.Chdir(dir)

	var stdout, stderr bytes.Buffer
	code := Main([]string{"vet", "workloads/"}, strings.NewReader(""), &stdout, &stderr)
	if code != exitInvalid {
		t.Errorf("wlc vet exited %d, want %d (the example is invalid on purpose)", code, exitInvalid)
	}
	if got := stdout.String() + stderr.String(); got != want {
		t.Errorf("README.md's vet output is not what wlc vet prints for its example; replace the block after %s with:\n%s", outputMarker, got)
	}
}

type mdLink struct {
	line   int
	target string
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// markdownLinks returns the relative link targets of a Markdown text,
// outside code blocks and code spans.
func markdownLinks(src string) []mdLink {
	var links []mdLink
	inFence := false
	for i, line := range strings.Split(src, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			if schemeRE.MatchString(m[1]) {
				continue
			}
			links = append(links, mdLink{i + 1, m[1]})
		}
	}
	return links
}

// headingAnchors returns the anchors GitHub gives a Markdown text's
// headings: lower case, spaces as hyphens, punctuation other than - and _
// dropped, a repeated anchor numbered -1, -2, ...
func headingAnchors(src string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(src, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// fencedAfter returns the body of the first fenced code block after
// marker in src.
func fencedAfter(src, marker string) (string, bool) {
	_, rest, ok := strings.Cut(src, marker)
	if !ok {
		return "", false
	}
	lines := strings.SplitAfter(rest, "\n")
	start := -1
	for i, l := range lines {
		if !fence.MatchString(l) {
			continue
		}
		if start < 0 {
			start = i + 1
			continue
		}
		return strings.Join(lines[start:i], ""), true
	}
	return "", false
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
