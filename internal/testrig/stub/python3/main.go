// Command python3 stands in for the python3 of an image with SGLang
// installed: `python3 -m sglang.launch_server ARGS` and `python3 -m
// sglang.bench_serving ARGS` run the stub sglang next to it (as
// `sglang launch_server ARGS`), any other sglang module is missing,
// `python3 -m venv` makes a real CPython virtual environment whose pip is
// the fake one (see venv), and everything else runs the next python3 on
// PATH, so result tools and other scripts see the real interpreter.
package main

import (
	"fmt"
	"os"
	"os/exec"
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
	real := realPython(self)
	if len(args) >= 2 && args[0] == "-m" && args[1] == "venv" {
		os.Exit(venv(real, dir, args[2:]))
	}
	fail(syscall.Exec(real, append([]string{"python3"}, args...), os.Environ()))
}

// realPython is the next python3 on PATH that is not this stub.
func realPython(self string) string {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, "python3")
		real, err := filepath.EvalSymlinks(p)
		if err != nil || real == self {
			continue
		}
		if fi, err := os.Stat(real); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	fmt.Fprintln(os.Stderr, "stub python3: no other python3 on PATH")
	os.Exit(127)
	return ""
}

// venv is `python3 -m venv [options] DIR...`: the real interpreter makes
// each environment (CPython's layout: pyvenv.cfg, bin/python3 and its
// links, lib/pythonX.Y/site-packages) without pip, then, unless
// --without-pip, the fake pip goes where ensurepip puts the real one: the
// pip package in the environment's site-packages and the bin/pip,
// bin/pip3 and bin/pipX.Y scripts running it with the environment's
// python. Its pip therefore installs into that environment only.
func venv(real, stubs string, args []string) int {
	var pass, dirs []string
	withPip := true
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--without-pip":
			withPip = false
		case a == "--prompt":
			if i+1 < len(args) {
				pass = append(pass, a, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-"):
			pass = append(pass, a) // the real venv judges its options
		default:
			dirs = append(dirs, a)
		}
	}
	cmd := exec.Command(real, append(append([]string{"-m", "venv", "--without-pip"}, pass...), dirs...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "stub python3 -m venv:", err)
		return 1
	}
	if !withPip {
		return 0
	}
	for _, d := range dirs {
		if err := addPip(filepath.Join(stubs, "python"), d); err != nil {
			fmt.Fprintln(os.Stderr, "stub python3 -m venv: installing pip:", err)
			return 1
		}
	}
	return 0
}

func addPip(python, env string) error {
	env, err := filepath.Abs(env)
	if err != nil {
		return err
	}
	sites, _ := filepath.Glob(filepath.Join(env, "lib", "python3*", "site-packages"))
	if len(sites) != 1 {
		return fmt.Errorf("%s has %d site-packages directories, want 1", env, len(sites))
	}
	pip := filepath.Join(sites[0], "pip")
	if err := os.CopyFS(pip, os.DirFS(filepath.Join(python, "pip"))); err != nil && !os.IsExist(err) {
		return err
	}
	if err := os.WriteFile(filepath.Join(pip, "DISTS"), []byte(filepath.Join(python, "dists")+"\n"), 0o644); err != nil {
		return err
	}
	ver := strings.TrimPrefix(filepath.Base(filepath.Dir(sites[0])), "python")
	// The console script pip's own installer writes, with this
	// environment's interpreter in its #! line.
	script := "#!" + filepath.Join(env, "bin", "python3") + "\n" +
		"# -*- coding: utf-8 -*-\nimport runpy\nimport sys\n" +
		"if __name__ == \"__main__\":\n    sys.argv[0] = \"pip\"\n    runpy.run_module(\"pip\", run_name=\"__main__\", alter_sys=True)\n"
	for _, n := range []string{"pip", "pip3", "pip" + ver} {
		if err := os.WriteFile(filepath.Join(env, "bin", n), []byte(script), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stub python3:", err)
	os.Exit(127)
}
