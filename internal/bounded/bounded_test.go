package bounded

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	limit := Limit{1 << 10, "a test file"}
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// No writer ever opens the FIFO: opening it to read would block.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("nowhere", dangling); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(write("target", 10), link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path    string
		n       int
		wantErr string
	}{
		{write("exact", 1<<10), 1 << 10, ""},
		{write("over", 1<<10+1), 0, "it is 1025 bytes, over wlc's bound of 1 KiB for a test file"},
		{write("large", 3<<20+1<<19), 0, "it is 3.5 MiB, over wlc's bound of 1 KiB for a test file"},
		{dir, 0, "it is a directory, not a regular file"},
		{fifo, 0, "it is a named pipe, not a regular file"},
		{"/dev/zero", 0, "it is a device, not a regular file"},
		{link, 10, ""},
		{filepath.Join(dir, "absent"), 0, "no such file or directory"},
		{dangling, 0, "it is a symbolic link to nowhere, which does not exist"},
	}
	for _, tc := range cases {
		done := make(chan struct{})
		var data []byte
		var err error
		go func() { data, err = ReadFile(tc.path, limit); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) blocks", tc.path)
		}
		switch {
		case tc.wantErr == "" && (err != nil || len(data) != tc.n):
			t.Errorf("ReadFile(%s) = %d bytes, %v; want %d bytes", tc.path, len(data), err, tc.n)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ReadFile(%s) error %v; want one containing %q", tc.path, err, tc.wantErr)
		}
	}
}

func TestCheckAliases(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       string // "" = within the bound
	}{
		{"no aliases", "a: [1, 2, {b: c}]", ""},
		{"a few", "a: &x {b: [1, 2]}\nc: *x\nd: *x", ""},
		// 101 aliases of a 100-node list expand to 10100 nodes, 99 to 9900.
		{"just over", "a: &x [" + strings.Repeat("0, ", 98) + "0]\nb: [" + strings.Repeat("*x, ", 100) + "*x]", "more than 10000 YAML nodes"},
		{"just under", "a: &x [" + strings.Repeat("0, ", 98) + "0]\nb: [" + strings.Repeat("*x, ", 98) + "*x]", ""},
		{"nested", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]", "more than 10000 YAML nodes"},
		{"cycle", "a: &a [*a]", "inside the value of its own anchor &a"},
		{"cycle through a mapping", "a: &a {b: [{c: *a}]}", "inside the value of its own anchor &a"},
		{"alias as a key", "a: &k key\n*k : v", ""},
	}
	for _, tc := range cases {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tc.yaml), &doc); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err := CheckAliases(&doc)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckAliases = %v; want %q", tc.name, err, tc.want)
		}
	}
}
