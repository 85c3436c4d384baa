package runner_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// libCommand is bash running body after lib.sh, as a job script does
// (set -euo pipefail, the server on 127.0.0.1), with only env and PATH.
func libCommand(body string, env ...string) *exec.Cmd {
	cmd := exec.Command("bash", "-c", "set -euo pipefail\nWLC_HOST=127.0.0.1\n"+runner.Library(plan.Workload{})+"\n"+body)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	return cmd
}

// pickPort runs lib.sh's wlc_pick_port with the given environment and
// returns the port it chose, or its exit status and output.
func pickPort(t *testing.T, env ...string) (int, string, error) {
	t.Helper()
	out, err := libCommand("wlc_pick_port\necho \"$WLC_PORT\"\n", env...).CombinedOutput()
	if err != nil {
		return 0, string(out), err
	}
	p, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if perr != nil {
		t.Fatalf("wlc_pick_port printed %q", out)
	}
	return p, string(out), nil
}

// TestPickPort: two run ids get different ports in 20000-32767, the same
// id the same port; a taken port moves to the next free one; WLC_PORT and
// the workload's port win, and a taken fixed port fails at once.
func TestPickPort(t *testing.T) {
	a, _, err := pickPort(t, "WLC_RUN_ID=01890a5c-job-a", "WLC_WORKLOAD_PORT=")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := pickPort(t, "WLC_RUN_ID=01890a5c-job-b", "WLC_WORKLOAD_PORT=")
	a2, _, _ := pickPort(t, "WLC_RUN_ID=01890a5c-job-a", "WLC_WORKLOAD_PORT=")
	if a == b || a != a2 || a < 20000 || a > 32767 || b < 20000 || b > 32767 {
		t.Errorf("ports %d, %d, %d: want distinct per run id, stable, in 20000-32767", a, b, a2)
	}

	// Occupy the derived port: the next one is taken.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", a))
	if err != nil {
		t.Skipf("cannot occupy port %d: %v", a, err)
	}
	defer ln.Close()
	if p, _, _ := pickPort(t, "WLC_RUN_ID=01890a5c-job-a", "WLC_WORKLOAD_PORT="); p != a+1 && !(a == 32767 && p == 20000) {
		t.Errorf("with %d taken got %d, want %d", a, p, a+1)
	}
	if p, _, _ := pickPort(t, "WLC_RUN_ID=x", "WLC_WORKLOAD_PORT=8123"); p != 8123 {
		t.Errorf("workload port: got %d", p)
	}
	if p, _, _ := pickPort(t, "WLC_RUN_ID=x", "WLC_WORKLOAD_PORT=8123", "WLC_PORT=9001"); p != 9001 {
		t.Errorf("WLC_PORT: got %d", p)
	}
	_, out, err := pickPort(t, "WLC_RUN_ID=x", fmt.Sprintf("WLC_WORKLOAD_PORT=%d", a))
	if err == nil || !strings.Contains(out, fmt.Sprintf("port %d is in use", a)) {
		t.Errorf("a taken fixed port: err %v, output %q", err, out)
	}
}

// TestWord: placeholders become quoted variable references, everything
// else is quoted literally.
func TestWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"", "''"},
		{"{base_url}/v1", `"${WLC_BASE_URL}"/v1`},
		{"model=a b,base_url={base_url}/v1/completions", `'model=a b,base_url='"${WLC_BASE_URL}"/v1/completions`},
		{"{results_dir}/x{base_url}", `"${WLC_BENCH_DIR}"/x"${WLC_BASE_URL}"`},
		{"{data_dir}/speed_bench/a b", `"${WLC_DATA_DIR}"'/speed_bench/a b'`},
		{"$(touch x)\n", `$'$(touch x)\n'`},
	} {
		got, err := runner.Word(c.in, runner.ServerVars)
		if err != nil || got != c.want {
			t.Errorf("Word(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if got, _ := runner.Word("{base_url}", runner.NoVars); got != "'{base_url}'" {
		t.Errorf("NoVars: %s", got)
	}
	if _, err := runner.Word("a\x00b", runner.ServerVars); err == nil {
		t.Error("a NUL byte was accepted")
	}
}

// TestPortClaims: a port another job has claimed is skipped though nothing
// listens on it yet (that job's server has not bound it), a claimed fixed
// port fails at once, and the claim ends with the job that held it.
func TestPortClaims(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock (util-linux) is not installed: the runner skips claims without it")
	}
	locks := t.TempDir()
	env := []string{"WLC_RUN_ID=01890a5c-job-a", "WLC_WORKLOAD_PORT=", "WLC_PORT_LOCKS=" + locks}
	// A job that picked its port and waits, as one whose server loads.
	holder := libCommand("wlc_pick_port\necho \"$WLC_PORT\"\nread -r _ || true\n", env...)
	in, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Wait()
	defer in.Close()
	var held int
	if _, err := fmt.Fscan(out, &held); err != nil {
		t.Fatalf("the holding job printed no port: %v", err)
	}

	// The same run id derives the same port: the next one is taken.
	if p, out, err := pickPort(t, env...); err != nil || (p != held+1 && !(held == 32767 && p == 20000)) {
		t.Errorf("with %d claimed got %d (%v, %q), want %d", held, p, err, out, held+1)
	}
	_, got, err := pickPort(t, append(env, fmt.Sprintf("WLC_PORT=%d", held))...)
	if err == nil || !strings.Contains(got, fmt.Sprintf("port %d is claimed by another wlc job on this host", held)) {
		t.Errorf("a claimed fixed port: err %v, output %q", err, got)
	}

	in.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("the holding job: %v", err)
	}
	if p, out, err := pickPort(t, env...); err != nil || p != held {
		t.Errorf("after the holder ended got %d (%v, %q), want %d again", p, err, out, held)
	}
}

// TestPortAlone: a second server listening on the job's port (vLLM binds
// with SO_REUSEPORT, so it can) fails the check as an infrastructure
// failure; the job's own server alone passes.
func TestPortAlone(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp (not Linux): wlc_port_alone sees no sockets here")
	}
	listen := func(port string) int {
		s, err := stub.BindReusePort("127.0.0.1", port)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Port()
		if err != nil {
			t.Fatal(err)
		}
		ln, err := s.Listen()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return p
	}
	check := func(port int) (string, error) {
		out, err := libCommand("if wlc_port_alone; then echo alone; else echo \"shared $WLC_INFRA\"; fi\n",
			fmt.Sprintf("WLC_PORT=%d", port)).CombinedOutput()
		return string(out), err
	}
	port := listen("0")
	if out, err := check(port); err != nil || !strings.HasSuffix(out, "alone\n") {
		t.Errorf("one server on %d: %v, %q", port, err, out)
	}
	listen(strconv.Itoa(port))
	out, err := check(port)
	want := fmt.Sprintf("2 sockets listen on port %d: another server shares it", port)
	if err != nil || !strings.Contains(out, want) || !strings.HasSuffix(out, "shared 95\n") {
		t.Errorf("two servers on %d: %v, %q; want %q and WLC_INFRA 95", port, err, out, want)
	}
}

// TestStopToolsThenRemove: a process below the tools' install that goes
// on writing into the install's directory for a second after TERM (srun's
// step tasks, a pip mid-write) is waited for, so the directory is removed
// and the job's exit status is its own; removing it earlier failed with
// "Directory not empty" and, under set -e in the exit trap, made a job
// that should exit 92 (requeued) exit 1.
func TestStopToolsThenRemove(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc (not Linux): wlc_kill_tree finds no processes below the install")
	}
	venv := t.TempDir() + "/venv"
	body := `mkdir -p "$V"
# The install (a subshell that dies on TERM) and below it a writer that
# keeps writing for a second after TERM.
( bash -c 'trap "end=\$((SECONDS + 1)); while [ \$SECONDS -lt \$end ]; do : >\"\$V/f\$RANDOM\"; done; exit 0" TERM
  while :; do : >"$V/f$RANDOM"; sleep 0.01; done' & wait ) &
WLC_TOOLS_PID=$!
sleep 0.3
wlc_kill_tree "$WLC_TOOLS_PID"
wait "$WLC_TOOLS_PID" 2>/dev/null || true
wlc_remove "$V"
if [ -e "$V" ]; then echo "left: $(ls "$V" | wc -l) files"; else echo removed; fi
exit 92
`
	out, err := libCommand(body, "V="+venv).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 92 {
		t.Fatalf("exit %v, want 92; output:\n%s", err, out)
	}
	if !strings.HasSuffix(string(out), "removed\n") {
		t.Errorf("the directory was not removed:\n%s", out)
	}
}
