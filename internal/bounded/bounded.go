// Package bounded reads the files wlc is given with a size bound, and
// bounds what a YAML document's aliases expand to: a small file must not
// make wlc read or build something huge (a help file that is a link to a
// disk image, a 1.6 KB YAML whose nested aliases expand to a billion
// nodes). Errors name the file and the bound.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"gopkg.in/yaml.v3"
)

// A Limit is the size bound of one kind of file wlc reads.
type Limit struct {
	Bytes int64
	// What names the kind of file, for the error.
	What string
}

// The bounds of the files wlc reads, each far above the largest real one
// (in brackets) and far below what would strain wlc's memory.
var (
	// WorkloadFile bounds a .cue file of a workloads package [profiles.cue,
	// 7 KB; a thousand generated workloads, 1 MB].
	WorkloadFile = Limit{16 << 20, "a .cue file"}
	// YAMLFile bounds a perf-eval workload or a vLLM recipe [a recipe,
	// 30 KB].
	YAMLFile = Limit{1 << 20, "a YAML workload or recipe"}
	// HelpFile bounds a flag catalog's help output [vllm serve --help=all,
	// 200 KB].
	HelpFile = Limit{4 << 20, "a help output file"}
	// ResultFile bounds one dashboard row file of a run [a few KB; an
	// eval's samples, 1 MB].
	ResultFile = Limit{64 << 20, "a dashboard row file"}
)

// ReadFile reads the regular file name if it holds at most limit.Bytes.
// Anything else (a FIFO or a device, which would block or never end; a
// directory; a larger file) is an error saying so and, for size, naming
// the bound; an error opening the file is os.Open's (naming the path).
// A symbolic link is followed.
func ReadFile(name string, limit Limit) ([]byte, error) {
	// Stat before Open: opening a FIFO blocks until it has a writer.
	if fi, err := os.Stat(name); err != nil {
		return nil, statError(name, err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is %s, not a regular file", kind(fi.Mode()))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat() // the file opened, if it was replaced meanwhile
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is %s, not a regular file", kind(fi.Mode()))
	}
	if fi.Size() > limit.Bytes {
		return nil, limit.tooLarge(fi.Size())
	}
	// The file may grow after Stat: read one byte past the bound to see.
	data, err := io.ReadAll(io.LimitReader(f, limit.Bytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit.Bytes {
		return nil, limit.tooLarge(int64(len(data)))
	}
	return data, nil
}

// statError says why name cannot be read, without repeating its path
// (the caller names the file): a symbolic link to nothing says so.
func statError(name string, err error) error {
	if target, lerr := os.Readlink(name); lerr == nil && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("it is a symbolic link to %s, which does not exist", target)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Check returns the error ReadFile gives for data over the bound.
func (l Limit) Check(data []byte) error {
	if int64(len(data)) > l.Bytes {
		return l.tooLarge(int64(len(data)))
	}
	return nil
}

func (l Limit) tooLarge(size int64) error {
	return fmt.Errorf("it is %s, over wlc's bound of %s for %s", Bytes(size), Bytes(l.Bytes), l.What)
}

// Bytes renders a size the way the errors above say it.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// AliasNodes bounds the nodes a YAML document's aliases expand to (as
// cuelang.org/go's YAML decoder does): nodes outside an alias are the
// file's own, bounded by its size; a nested alias multiplies.
const AliasNodes = 10_000

// An AliasError is a YAML document whose aliases expand to more than
// AliasNodes nodes, or an anchor that contains an alias of itself.
type AliasError struct {
	// At is the alias where the bound was crossed or the cycle closed.
	At *yaml.Node
	// Cycle: the anchor's value contains an alias of the anchor.
	Cycle bool
}

func (e *AliasError) Error() string {
	if e.Cycle {
		return fmt.Sprintf("alias *%s is inside the value of its own anchor &%s, so it never ends; write the value out", e.At.Value, e.At.Value)
	}
	return fmt.Sprintf("the aliases expand to more than %d YAML nodes (wlc's bound; alias *%s crosses it); write the values out instead of nesting aliases", AliasNodes, e.At.Value)
}

// CheckAliases walks doc as a reader that expands every alias would and
// returns an *AliasError if that walk would not end or would visit more
// than AliasNodes nodes through aliases. It visits each node once (an
// anchor's expanded size is remembered), so a billion-node expansion is
// refused in the time its file takes to parse.
func CheckAliases(doc *yaml.Node) error {
	c := aliasCheck{size: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	_, err := c.walk(doc)
	return err
}

type aliasCheck struct {
	// size is a node's expanded size (itself and its descendants, aliases
	// expanded), saturating above AliasNodes.
	size map[*yaml.Node]int
	// open are the nodes being walked: an alias to one of them is a cycle.
	open map[*yaml.Node]bool
	// expanded is the nodes aliases have produced so far.
	expanded int
}

func (c *aliasCheck) walk(n *yaml.Node) (int, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := c.size[n]; ok {
		return s, nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1, nil
		}
		if c.open[n.Alias] {
			return 0, &AliasError{At: n, Cycle: true}
		}
		s, err := c.walk(n.Alias)
		if err != nil {
			return 0, err
		}
		c.expanded += s
		if c.expanded > AliasNodes {
			return 0, &AliasError{At: n}
		}
		return s, nil
	}
	c.open[n] = true
	total := 1
	for _, k := range n.Content {
		s, err := c.walk(k)
		if err != nil {
			return 0, err
		}
		total = min(total+s, AliasNodes+1)
	}
	delete(c.open, n)
	c.size[n] = total
	return total, nil
}
