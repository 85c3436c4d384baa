// Command python3 stands in for the python3 of an image with SGLang
// installed: `python3 -m sglang.launch_server ARGS` and `python3 -m
// sglang.bench_serving ARGS` run the stub sglang next to it (as
// `sglang launch_server ARGS`), any other sglang module is missing, and
// everything else runs the next python3 on PATH, so result tools and other
// scripts see the real interpreter.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	self, _ = filepath.EvalSymlinks(self)
	dir := filepath.Dir(self)
	args := os.Args[1:]
	if len(args) >= 2 && args[0] == "-m" && (args[1] == "sglang" || strings.HasPrefix(args[1], "sglang.")) {
		switch mod := strings.TrimPrefix(args[1], "sglang."); mod {
		case "launch_server", "bench_serving":
			prog := filepath.Join(dir, "sglang")
			fail(syscall.Exec(prog, append([]string{"sglang", mod}, args[2:]...), os.Environ()))
		default:
			fmt.Fprintf(os.Stderr, "%s: No module named %s\n", os.Args[0], args[1])
			os.Exit(1)
		}
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, "python3")
		real, err := filepath.EvalSymlinks(p)
		if err != nil || real == self {
			continue
		}
		if fi, err := os.Stat(real); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			fail(syscall.Exec(p, append([]string{"python3"}, args...), os.Environ()))
		}
	}
	fmt.Fprintln(os.Stderr, "stub python3: no other python3 on PATH")
	os.Exit(127)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stub python3:", err)
	os.Exit(127)
}
