package runner_test

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// pickPort runs lib.sh's wlc_pick_port with the given environment and
// returns the port it chose, or its exit status and output.
func pickPort(t *testing.T, env ...string) (int, string, error) {
	t.Helper()
	script := "set -euo pipefail\nWLC_HOST=127.0.0.1\n" + runner.Library(plan.Workload{}) + "\nwlc_pick_port\necho \"$WLC_PORT\"\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	out, err := cmd.CombinedOutput()
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
