// Command docker is a fake docker CLI for tests. It appends every argv to
// $WLC_FAKE_DOCKER_STATE/calls.jsonl and implements just enough of docker
// for wlc's job scripts, with the real CLI's option names (an unknown option
// is an error, so a typo in a generated script fails the test):
//
//	run [-d] [opts] IMAGE [ARG...]  starts the image's entrypoint with ARG...
//	                              from PATH as the "container" (`vllm serve`;
//	                              none for an sglang image: ARG... is the
//	                              command; --entrypoint E runs `E ARG...`),
//	                              env from -e only (NAME=value, or NAME taken
//	                              from this process) plus PATH, HOME,
//	                              PYTHONPATH (the image's Python packages) and
//	                              WLC_STUB_*, -p host and container ports
//	                              must match, -w sets the working directory;
//	                              prints the id (-d), or waits, prints the
//	                              output and exits with the container's status
//	exec [-i] [-e K=V] NAME CMD   runs CMD with the container's env
//	logs [-f] [--tail N] NAME     the container's output
//	inspect -f TEMPLATE NAME      {{.State.Running}} {{.State.ExitCode}}
//	                              {{.State.Status}} {{.Name}} {{.Id}}
//	stop [-t N] NAME, kill NAME, rm [-f] NAME, wait NAME
//	cp NAME:PATH DEST | SRC NAME:PATH  (the container shares the host's
//	                              files; a directory is copied whole, and
//	                              SRC/. copies its content into DEST)
//	pull IMAGE                    WLC_FAKE_DOCKER_PULL_FAIL=1 fails it, and
//	                              run's pull too, with the daemon's "pull
//	                              access denied" (run: status 125)
//	image inspect [-f T] IMAGE... the image's Id and RepoDigests
//	                              (stub.ImageDigest); -f takes {{.Id}},
//	                              {{index .RepoDigests 0}}, {{json .RepoDigests}}
//
// Each container lives in $WLC_FAKE_DOCKER_STATE/containers/NAME while it
// exists: config.json, pid, supervisor.pid, exit (its status) and log.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

var state string

func main() {
	state = os.Getenv("WLC_FAKE_DOCKER_STATE")
	if state == "" {
		fatal(125, "fake docker: WLC_FAKE_DOCKER_STATE is not set")
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "__supervise" {
		supervise(args[1])
		return
	}
	record(args)
	if len(args) == 0 {
		fatal(125, "fake docker: no command")
	}
	switch args[0] {
	case "run":
		run(args[1:])
	case "exec":
		execCmd(args[1:])
	case "logs":
		logs(args[1:])
	case "inspect":
		inspect(args[1:])
	case "stop":
		stop(args[1:])
	case "kill":
		kill(args[1:])
	case "rm":
		rm(args[1:])
	case "wait":
		wait(args[1:])
	case "cp":
		cp(args[1:])
	case "pull":
		if len(args) != 2 {
			fatal(1, `"docker pull" requires exactly 1 argument.`)
		}
		if pullFails() {
			fatal(1, pullDenied(args[1]))
		}
		fmt.Println("fake pull:", strings.Join(args[1:], " "))
	case "image":
		if len(args) < 2 || args[1] != "inspect" {
			fatal(125, "fake docker: unsupported command image "+strings.Join(args[1:], " "))
		}
		imageInspect(args[2:])
	default:
		fatal(125, "fake docker: unsupported command "+args[0])
	}
}

// pullFails: WLC_FAKE_DOCKER_PULL_FAIL=1 makes every pull fail, as a
// registry refusing the image does (also run's pull of an image the host
// does not have: none is there).
func pullFails() bool { return os.Getenv("WLC_FAKE_DOCKER_PULL_FAIL") == "1" }

func pullDenied(image string) string {
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return "Error response from daemon: pull access denied for " + repo +
		", repository does not exist or may require 'docker login': denied: requested access to the resource is denied"
}

// imageInspect is `docker image inspect`: the fake registry's Id and
// digest of each image, derived from its name (stub.ImageDigest).
func imageInspect(args []string) {
	format := ""
	var images []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" || a == "--format":
			if i+1 >= len(args) {
				fatal(125, "flag needs an argument: "+a)
			}
			format = args[i+1]
			i++
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		case strings.HasPrefix(a, "-"):
			fatal(125, "unknown flag: "+a)
		default:
			images = append(images, a)
		}
	}
	if len(images) == 0 {
		fatal(1, `"docker image inspect" requires at least 1 argument.`)
	}
	rc := 0
	var all []map[string]any
	for _, img := range images {
		if pullFails() {
			fmt.Fprintf(os.Stderr, "Error response from daemon: No such image: %s\n", img)
			rc = 1
			continue
		}
		repo, _, _ := strings.Cut(img, "@")
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		d := stub.ImageDigest(img)
		m := map[string]any{"Id": stub.ImageID(img), "RepoTags": []string{img}, "RepoDigests": []string{repo + "@" + d}}
		switch format {
		case "":
			all = append(all, m)
		case "{{.Id}}", "{{.ID}}":
			fmt.Println(m["Id"])
		case "{{index .RepoDigests 0}}":
			fmt.Println(repo + "@" + d)
		case "{{json .RepoDigests}}":
			b, _ := json.Marshal(m["RepoDigests"])
			fmt.Println(string(b))
		default:
			fatal(125, "fake docker: unsupported --format "+format)
		}
	}
	if format == "" {
		b, _ := json.MarshalIndent(all, "", "    ")
		fmt.Println(string(b))
	}
	os.Exit(rc)
}

func fatal(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(code)
}

func record(args []string) {
	_ = os.MkdirAll(state, 0o755)
	line, _ := json.Marshal(map[string]any{"argv": args, "time": time.Now()})
	f, err := os.OpenFile(filepath.Join(state, "calls.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fatal(125, err.Error())
	}
	_, _ = f.Write(append(line, '\n'))
	f.Close()
}

type config struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	Env     []string `json:"env"`
	Cmd     []string `json:"cmd"`
	Workdir string   `json:"workdir,omitempty"`
}

func dir(name string) string { return filepath.Join(state, "containers", name) }

func load(name string) (config, bool) {
	var c config
	data, err := os.ReadFile(filepath.Join(dir(name), "config.json"))
	if err != nil {
		return c, false
	}
	return c, json.Unmarshal(data, &c) == nil
}

func mustLoad(name string, what string) config {
	c, ok := load(name)
	if !ok {
		fatal(1, "Error response from daemon: No such "+what+": "+name)
	}
	return c
}

func readInt(name, file string) (int, bool) {
	data, err := os.ReadFile(filepath.Join(dir(name), file))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return n, err == nil
}

func running(name string) bool {
	if _, exited := readInt(name, "exit"); exited {
		return false
	}
	pid, ok := readInt(name, "pid")
	return ok && syscall.Kill(pid, 0) == nil
}

// Options of docker run that take a value, and those that do not.
var runValue = map[string]bool{"--name": true, "-e": true, "--env": true, "-p": true, "--publish": true,
	"-v": true, "--volume": true, "--gpus": true, "--ulimit": true, "--device": true, "--group-add": true,
	"--security-opt": true, "--shm-size": true, "--label": true, "-l": true, "--cap-add": true,
	"--network": true, "--net": true, "--entrypoint": true, "--ipc": true, "--user": true, "-u": true,
	"-w": true, "--workdir": true, "--runtime": true, "--pull": true}
var runBool = map[string]bool{"-d": true, "--detach": true, "--rm": true, "--init": true,
	"--privileged": true, "-i": true, "-t": true, "-it": true}

func run(args []string) {
	var name, ep, workdir string
	var env []string
	detached := false
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		opt, val, hasVal := strings.Cut(args[i], "=")
		switch {
		case runBool[opt] && !hasVal:
			if opt == "-d" || opt == "--detach" {
				detached = true
			}
			continue
		case !runValue[opt]:
			fatal(125, "unknown flag: "+opt)
		}
		if !hasVal {
			i++
			if i >= len(args) {
				fatal(125, "flag needs an argument: "+opt)
			}
			val = args[i]
		}
		switch opt {
		case "--name":
			name = val
		case "-e", "--env":
			if strings.Contains(val, "=") {
				env = append(env, val)
			} else if v, ok := os.LookupEnv(val); ok {
				env = append(env, val+"="+v)
			}
		case "-p", "--publish":
			parts := strings.Split(val, ":")
			if len(parts) < 2 || parts[len(parts)-1] != parts[len(parts)-2] {
				fatal(125, "fake docker: -p "+val+": host and container port must be equal")
			}
		case "-v", "--volume":
			if parts := strings.Split(val, ":"); len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[1], "/") {
				fatal(125, "invalid volume specification: "+val)
			}
		case "--entrypoint":
			ep = val
		case "-w", "--workdir":
			if !strings.HasPrefix(val, "/") {
				fatal(125, "the working directory '"+val+"' is invalid, it needs to be an absolute path")
			}
			workdir = val
		}
	}
	if i >= len(args) {
		fatal(125, "docker run requires at least 1 argument")
	}
	if name == "" {
		name = fmt.Sprintf("fake_%d", time.Now().UnixNano())
	}
	image, cmd := args[i], append(entrypoint(args[i]), args[i+1:]...)
	if ep != "" {
		cmd = append([]string{ep}, args[i+1:]...)
	}
	if len(cmd) == 0 {
		fatal(125, "docker: Error response from daemon: no command specified")
	}
	if pullFails() {
		// An image not on the host is pulled first, and that failed.
		fmt.Fprintf(os.Stderr, "Unable to find image '%s' locally\ndocker: %s\n\nRun 'docker run --help' for more information\n", image, pullDenied(image))
		os.Exit(125)
	}
	if err := os.MkdirAll(filepath.Join(state, "containers"), 0o755); err != nil {
		fatal(125, err.Error())
	}
	if err := os.Mkdir(dir(name), 0o755); err != nil {
		fatal(125, fmt.Sprintf("docker: Error response from daemon: Conflict. The container name %q is already in use.", "/"+name))
	}
	// A container sees only its -e variables, PATH, HOME and PYTHONPATH
	// (what the image has), plus the WLC_STUB_* knobs (and WLC_STUB_LOG) a
	// test sets for the stubs.
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PYTHONPATH=" + os.Getenv("PYTHONPATH")}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "WLC_STUB_") {
			base = append(base, kv)
		}
	}
	c := config{ID: fmt.Sprintf("%064x", time.Now().UnixNano()), Name: name, Image: image, Env: append(base, env...), Cmd: cmd, Workdir: workdir}
	data, _ := json.MarshalIndent(c, "", "  ")
	if err := os.WriteFile(filepath.Join(dir(name), "config.json"), data, 0o644); err != nil {
		fatal(125, err.Error())
	}
	self, _ := os.Executable()
	sup := exec.Command(self, "__supervise", name)
	sup.Env = os.Environ()
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sup.Start(); err != nil {
		fatal(125, err.Error())
	}
	_ = sup.Process.Release()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, ok := readInt(name, "pid"); ok {
			if !detached {
				attach(name)
			}
			fmt.Println(c.ID)
			return
		}
		if code, ok := readInt(name, "exit"); ok {
			fatal(127, fmt.Sprintf("docker: failed to start the container (exit %d)", code))
		}
	}
	fatal(125, "fake docker: the container did not start")
}

// attach is `docker run` without -d: the container's output, then its exit
// status as docker's own.
func attach(name string) {
	for {
		if code, ok := readInt(name, "exit"); ok {
			if data, err := os.ReadFile(filepath.Join(dir(name), "log")); err == nil {
				os.Stdout.Write(data)
			}
			os.Exit(code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// entrypoint is the image's ENTRYPOINT: the vLLM images' is `vllm serve`;
// SGLang's images (lmsysorg/sglang) have none, so the run's arguments are
// the whole command.
func entrypoint(image string) []string {
	repo := image
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if strings.Contains(repo, "sglang") {
		return nil
	}
	return []string{"vllm", "serve"}
}

// supervise runs the container's process and records its exit status.
func supervise(name string) {
	c := mustLoad(name, "container")
	log, err := os.OpenFile(filepath.Join(dir(name), "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		os.Exit(1)
	}
	_ = os.WriteFile(filepath.Join(dir(name), "supervisor.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	stub.Write("docker", "supervise", map[string]string{"container": name})
	cmd := command(c, c.Cmd)
	cmd.Dir = c.Workdir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	code := 0
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(log, err)
		code = 127
	} else {
		_ = os.WriteFile(filepath.Join(dir(name), "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		code = exitCode(cmd.Wait())
	}
	_ = os.WriteFile(filepath.Join(dir(name), "exit"), []byte(strconv.Itoa(code)), 0o644)
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 127
}

// command runs argv with the container's environment, found on its PATH.
func command(c config, argv []string) *exec.Cmd {
	path := argv[0]
	for _, kv := range c.Env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok && !strings.Contains(path, "/") {
			for _, d := range filepath.SplitList(p) {
				if fi, err := os.Stat(filepath.Join(d, path)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					path = filepath.Join(d, path)
					break
				}
			}
		}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = c.Env
	return cmd
}

func execCmd(args []string) {
	var env []string
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch args[i] {
		case "-i", "-t", "-it":
		case "-e", "--env":
			i++
			env = append(env, args[i])
		default:
			fatal(125, "unknown flag: "+args[i])
		}
	}
	if len(args)-i < 2 {
		fatal(125, "docker exec requires at least 2 arguments")
	}
	name := args[i]
	c := mustLoad(name, "container")
	if !running(name) {
		fatal(1, "Error response from daemon: container "+name+" is not running")
	}
	c.Env = append(c.Env, env...)
	cmd := command(c, args[i+1:])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			fatal(127, "OCI runtime exec failed: "+err.Error())
		}
		os.Exit(exitCode(err))
	}
}

func logs(args []string) {
	follow, tail := false, -1
	var name string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" || a == "--follow":
			follow = true
		case a == "--tail" || a == "-n":
			i++
			tail, _ = strconv.Atoi(args[i])
		case strings.HasPrefix(a, "--tail="):
			tail, _ = strconv.Atoi(strings.TrimPrefix(a, "--tail="))
		case strings.HasPrefix(a, "-"):
			fatal(125, "unknown flag: "+a)
		default:
			name = a
		}
	}
	mustLoad(name, "container")
	f, err := os.Open(filepath.Join(dir(name), "log"))
	if err != nil {
		// Not created yet: the supervisor creates it right away.
		time.Sleep(50 * time.Millisecond)
		if f, err = os.Open(filepath.Join(dir(name), "log")); err != nil {
			return
		}
	}
	defer f.Close()
	if tail >= 0 {
		data, _ := io.ReadAll(f)
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > tail {
			lines = lines[len(lines)-tail:]
		}
		os.Stdout.WriteString(strings.Join(lines, ""))
	}
	for {
		_, _ = io.Copy(os.Stdout, f)
		if !follow {
			return
		}
		if _, ok := load(name); !ok || !running(name) {
			_, _ = io.Copy(os.Stdout, f)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func inspect(args []string) {
	format, name := "", ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" || a == "--format":
			i++
			format = args[i]
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		case strings.HasPrefix(a, "-"):
			fatal(125, "unknown flag: "+a)
		default:
			name = a
		}
	}
	c, ok := load(name)
	if !ok {
		fatal(1, "Error: No such object: "+name)
	}
	code, _ := readInt(name, "exit")
	status := "exited"
	if running(name) {
		status = "running"
	}
	if format == "" {
		format = `{"Id":"{{.Id}}","Name":"/{{.Name}}","State":{"Status":"{{.State.Status}}"}}`
	}
	out := strings.NewReplacer("{{.State.Running}}", strconv.FormatBool(status == "running"),
		"{{.State.ExitCode}}", strconv.Itoa(code), "{{.State.Status}}", status,
		"{{.Name}}", "/"+c.Name, "{{.Id}}", c.ID).Replace(format)
	if strings.Contains(out, "{{") {
		fatal(1, "fake docker: unsupported template "+format)
	}
	fmt.Println(out)
}

func signalGroup(name string, sig syscall.Signal) {
	if pid, ok := readInt(name, "pid"); ok {
		_ = syscall.Kill(-pid, sig)
	}
}

func waitExit(name string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !running(name) {
			// Let the supervisor write the status.
			for j := 0; j < 100; j++ {
				if _, ok := readInt(name, "exit"); ok {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			return true
		}
	}
	return !running(name)
}

func stop(args []string) {
	timeout, name := 10, ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-t" || a == "--time" || a == "--timeout":
			i++
			timeout, _ = strconv.Atoi(args[i])
		case strings.HasPrefix(a, "-"):
			fatal(125, "unknown flag: "+a)
		default:
			name = a
		}
	}
	mustLoad(name, "container")
	if running(name) {
		signalGroup(name, syscall.SIGTERM)
		if !waitExit(name, time.Duration(timeout)*time.Second) {
			signalGroup(name, syscall.SIGKILL)
			waitExit(name, 5*time.Second)
		}
	}
	fmt.Println(name)
}

func kill(args []string) {
	if len(args) != 1 {
		fatal(125, "fake docker: kill NAME")
	}
	mustLoad(args[0], "container")
	if !running(args[0]) {
		fatal(1, "Error response from daemon: container "+args[0]+" is not running")
	}
	signalGroup(args[0], syscall.SIGKILL)
	waitExit(args[0], 5*time.Second)
	fmt.Println(args[0])
}

func rm(args []string) {
	force, name := false, ""
	for _, a := range args {
		switch {
		case a == "-f" || a == "--force":
			force = true
		case strings.HasPrefix(a, "-"):
			fatal(125, "unknown flag: "+a)
		default:
			name = a
		}
	}
	mustLoad(name, "container")
	if running(name) {
		if !force {
			fatal(1, "Error response from daemon: cannot remove container "+name+": container is running: stop the container before removing or force remove")
		}
		signalGroup(name, syscall.SIGKILL)
		waitExit(name, 5*time.Second)
	}
	if err := os.RemoveAll(dir(name)); err != nil {
		fatal(1, err.Error())
	}
	fmt.Println(name)
}

func wait(args []string) {
	if len(args) != 1 {
		fatal(125, "fake docker: wait NAME")
	}
	mustLoad(args[0], "container")
	for running(args[0]) {
		time.Sleep(20 * time.Millisecond)
	}
	waitExit(args[0], time.Second)
	code, _ := readInt(args[0], "exit")
	fmt.Println(code)
}

func cp(args []string) {
	if len(args) != 2 {
		fatal(125, "docker cp requires exactly 2 arguments")
	}
	src, dst := args[0], args[1]
	for _, p := range []*string{&src, &dst} {
		if name, path, ok := strings.Cut(*p, ":"); ok {
			mustLoad(name, "container")
			*p = path
		}
	}
	fi, err := os.Stat(src)
	if err != nil {
		fatal(1, "Error response from daemon: Could not find the file "+src+" in container")
	}
	if fi.IsDir() {
		// docker: SRC/. copies the content; otherwise SRC becomes DEST,
		// or DEST/<base of SRC> when DEST is a directory.
		if !strings.HasSuffix(src, "/.") {
			if di, err := os.Stat(dst); err == nil && di.IsDir() {
				dst = filepath.Join(dst, filepath.Base(src))
			}
		} else if di, err := os.Stat(dst); err != nil || !di.IsDir() {
			fatal(1, "Error response from daemon: "+dst+" is not a directory")
		}
		if err := copyOver(src, dst); err != nil {
			fatal(1, err.Error())
		}
		return
	}
	if di, err := os.Stat(dst); err == nil && di.IsDir() {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	if err := copyFile(src, dst); err != nil {
		fatal(1, err.Error())
	}
}

// copyOver copies every file of src into dst, replacing what is there
// (docker cp overwrites; os.CopyFS stops at existing files).
func copyOver(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
