package native_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// TestPortShared: another server binds the job's port while the job's
// own loads, as a second vLLM can (both bind with SO_REUSEPORT), and
// listens first. Whether it serves another model or the job's own, the
// job does not take its answer for its own server's; once its server
// listens too, the job stops before any client runs, as an infrastructure
// failure (status 95) that a retry on another port fixes, not a workload
// one.
func TestPortShared(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp (not Linux): the runner cannot see a port's listeners here")
	}
	w := workload(t, "sweep.txtar")
	for name, model := range map[string]string{"another model": "other/model", "the same model": w.Model} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The other server's socket: bound before the job starts, not
			// yet listening, so the job's free-port probe finds the port free.
			other, err := stub.BindReusePort("127.0.0.1", "0")
			if err != nil {
				t.Fatal(err)
			}
			port, err := other.Port()
			if err != nil {
				t.Fatal(err)
			}
			up := filepath.Join(t.TempDir(), "listen")
			j := runnertest.NewJob(t, native.Backend{}, w, "WLC_PORT="+strconv.Itoa(port), "WLC_STUB_LISTEN_ON_FILE="+up)
			done := make(chan runnertest.Result, 1)
			go func() { done <- j.Run(t, jobTimeout) }()

			// Once the job's server started (it binds the port too), the
			// other server listens; once the job has polled it twice (so it
			// turned the first answer down), the job's server may listen.
			deadline := time.Now().Add(jobTimeout)
			for len(runnertest.Find(j.Records(t), "vllm", "serve")) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the job's server never started")
				}
				time.Sleep(50 * time.Millisecond)
			}
			ln, err := other.Listen()
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			polled := make(chan struct{})
			var polls atomic.Int32
			mux := http.NewServeMux()
			mux.HandleFunc("/health", func(http.ResponseWriter, *http.Request) {})
			mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
				fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, model)
				if polls.Add(1) == 2 {
					close(polled)
				}
			})
			go http.Serve(ln, mux)
			select {
			case <-polled:
			case res := <-done:
				t.Fatalf("the job ended (exit %d) before polling the other server twice:\n%s", res.Code, res.Output)
			}
			if err := os.WriteFile(up, nil, 0o644); err != nil {
				t.Fatal(err)
			}

			res := <-done
			if res.Code != 95 {
				t.Fatalf("exit %d, want 95:\n%s", res.Code, res.Output)
			}
			wantOutput(t, res, fmt.Sprintf("2 sockets listen on port %d: another server shares it", port),
				"exit class: infrastructure (status 95")
			if model == w.Model {
				wantOutput(t, res, fmt.Sprintf("a server that is not this job's answers on port %d", port))
			}
			if n := j.BenchInvocations(t); n != 0 {
				t.Errorf("%d bench runs on a shared port", n)
			}
			j.NoProcessLeft(t)
		})
	}
}
