package slurm_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestDisaggOnCluster submits the pd_two_node job (one prefill instance,
// one decode instance, the router on the first node) with the stub vllm
// and vllm-router, and the same job with a decode instance that dies while
// the instances load.
func TestDisaggOnCluster(t *testing.T) {
	c := slurmtest.Require(t)
	bin := stub.Build(t, t.TempDir())
	sc := scripts(t)
	// The dashboards: a loopback ingest server the job's nodes reach.
	srv := ingesttest.New(t, "tok-pd")
	ok := submit(t, c, bin, "pd_two_node", sc["pd_two_node"], srv.Env()...)
	// Every instance takes 60 s to "load"; the decode instance dies after
	// 1 s with status 3: the job must fail at once with that status, not
	// at the startup timeout (120 s).
	dying := submit(t, c, bin, "pd_two_node", sc["pd_two_node"],
		"WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_DIE_AFTER=1", "WLC_STUB_DIE_CODE=3", "WLC_STUB_DIE_KV_ROLE=kv_consumer")
	var wg sync.WaitGroup
	wg.Go(func() {
		t.Run("serves-"+ok.id, func(t *testing.T) {
			ok.wait(t, c, "COMPLETED", "0:0")
			checkDisagg(t, ok)
			checkDisaggRows(t, ok, srv)
			ok.noLeftovers(t, bin)
		})
	})
	wg.Go(func() {
		t.Run("decode-dies-"+dying.id, func(t *testing.T) {
			dying.wait(t, c, "FAILED", "3:0")
			f := c.Job(t, dying.id)
			start, err1 := time.Parse("2006-01-02T15:04:05", f["StartTime"])
			end, err2 := time.Parse("2006-01-02T15:04:05", f["EndTime"])
			if err1 != nil || err2 != nil {
				t.Fatalf("job times: %v %v", err1, err2)
			}
			if end.Sub(start) > 20*time.Second {
				t.Errorf("a job whose decode instance died after 1 s ran %v before failing", end.Sub(start))
			}
			log := dying.log(t)
			if !strings.Contains(log, "decode[0] on") || !strings.Contains(log, "ended (status 3)") {
				t.Errorf("the job log does not say the decode instance ended with status 3:\n%s", log)
			}
			if rs := dying.records_(t, "vllm-router", "route"); len(rs) != 0 {
				t.Errorf("the router started although an instance died before it was ready")
			}
			if rs := dying.records_(t, "vllm", "bench"); len(rs) != 0 {
				t.Errorf("a benchmark ran against a dead decode instance")
			}
			dying.noLeftovers(t, bin)
		})
	})
	wg.Wait()
}

func checkDisagg(t *testing.T, r *run) {
	servers := r.records_(t, "vllm", "serve")
	if len(servers) != 2 {
		t.Fatalf("%d vllm serve processes, want 2 (one prefill, one decode)\n%s", len(servers), r.log(t))
	}
	byRole := map[string]stub.Record{}
	for _, s := range servers {
		var cfg map[string]any
		raw, _ := stub.Flag(s.Argv, "--kv-transfer-config")
		if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
			t.Fatalf("--kv-transfer-config %q: %v", raw, err)
		}
		if cfg["kv_connector"] != "NixlConnector" || cfg["kv_load_failure_policy"] != "fail" {
			t.Errorf("kv transfer config %s, want NixlConnector with kv_load_failure_policy fail", raw)
		}
		if extra, _ := json.Marshal(cfg["kv_connector_extra_config"]); string(extra) != `{"num_threads":4}` {
			t.Errorf("kv_connector_extra_config %s, want {\"num_threads\":4}", extra)
		}
		byRole[cfg["kv_role"].(string)] = s
	}
	pre, dec := byRole["kv_producer"], byRole["kv_consumer"]
	if pre.Argv == nil || dec.Argv == nil {
		t.Fatalf("want one kv_producer and one kv_consumer instance, got roles %v", byRole)
	}
	head := pre.Env["SLURMD_NODENAME"]
	if head == "" || head == dec.Env["SLURMD_NODENAME"] {
		t.Errorf("prefill ran on %q and decode on %q, want two different nodes", head, dec.Env["SLURMD_NODENAME"])
	}
	for role, want := range map[string]map[string]string{
		"kv_producer": {"port": "8100", "host": "0.0.0.0", "data-parallel-size": "4", "data-parallel-size-local": "4",
			"data-parallel-start-rank": "0", "data-parallel-rpc-port": "29500", "data-parallel-hybrid-lb": "true",
			"data-parallel-address": "127.0.0.1", "nixl-side-channel-host": "127.0.0.1"},
		"kv_consumer": {"port": "8200", "host": "0.0.0.0", "tensor-parallel-size": "4", "data-parallel-hybrid-lb": "false",
			"nixl-side-channel-host": "127.0.0.1"},
	} {
		s := byRole[role]
		for k, v := range want {
			if s.Flags[k] != v {
				t.Errorf("%s instance: %s = %q, want %q (argv %q)", role, k, s.Flags[k], v, s.Argv)
			}
		}
		if got := s.Env["CUDA_VISIBLE_DEVICES"]; got != "0,1,2,3" {
			t.Errorf("%s instance: CUDA_VISIBLE_DEVICES %q, want 0,1,2,3", role, got)
		}
		if !stub.Has(s.Argv, "--enable-expert-parallel") || !stub.Has(s.Argv, "--trust-remote-code") {
			t.Errorf("%s instance lacks the shared serve options: %q", role, s.Argv)
		}
		if s.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] != "5600" {
			t.Errorf("%s instance: VLLM_NIXL_SIDE_CHANNEL_PORT %q, want the workload's 5600", role, s.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"])
		}
	}
	if _, ok := dec.Flags["data-parallel-size"]; ok {
		t.Errorf("the TP4 decode instance got data-parallel flags: %q", dec.Argv)
	}
	if dec.Env["UCX_TLS"] != "rc,cuda_copy" || pre.Env["UCX_TLS"] != "" {
		t.Errorf("UCX_TLS: decode %q, prefill %q; want the decode role's env on decode only", dec.Env["UCX_TLS"], pre.Env["UCX_TLS"])
	}
	if !stub.Has(pre.Argv, "--no-enable-chunked-prefill") || stub.Has(dec.Argv, "--no-enable-chunked-prefill") {
		t.Errorf("role serve options crossed roles: prefill %q, decode %q", pre.Argv, dec.Argv)
	}

	routes := r.records_(t, "vllm-router", "route")
	if len(routes) != 1 {
		t.Fatalf("%d routers started, want 1\n%s", len(routes), r.log(t))
	}
	rt := routes[0]
	if rt.Env["SLURMD_NODENAME"] != head {
		t.Errorf("the router ran on %s, not on the first node %s", rt.Env["SLURMD_NODENAME"], head)
	}
	for k, v := range map[string]string{"prefill": "http://127.0.0.1:8100", "decode": "http://127.0.0.1:8200", "policy": "round_robin", "host": "0.0.0.0"} {
		if rt.Flags[k] != v {
			t.Errorf("router %s = %q, want %q (argv %q)", k, rt.Flags[k], v, rt.Argv)
		}
	}
	benches := r.records_(t, "vllm", "bench")
	if len(benches) != 1 {
		t.Fatalf("%d bench runs, want 1", len(benches))
	}
	if base, _ := stub.Flag(benches[0].Argv, "--base-url"); base != "http://127.0.0.1:"+rt.Flags["port"] {
		t.Errorf("the benchmark went to %s, not through the router on port %s", base, rt.Flags["port"])
	}
	served := r.records_(t, "vllm-router", "served")
	if len(served) != 1 {
		t.Fatalf("the router did not record its requests on shutdown (%d records): it was not stopped with SIGTERM\n%s", len(served), r.log(t))
	}
	for _, u := range []string{"http://127.0.0.1:8100", "http://127.0.0.1:8200"} {
		if n, _ := strconv.Atoi(served[0].Flags[u]); n != 4 {
			t.Errorf("the router sent %s %q requests, want the benchmark's 4", u, served[0].Flags[u])
		}
	}
	for _, f := range []string{"bench-short-conc-2.json", "prefill-0.log", "decode-0.log", "router.log"} {
		if fi, err := os.Stat(r.file(f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty: %v\n%s", f, err, r.log(t))
		}
	}
}

// checkDisaggRows: each bench run's perf row reached the dashboard marked
// disaggregated and multi-node, its throughput divided by every GPU the
// instances use (prefill 4 + decode 4), as perf-eval's PD branch did.
func checkDisaggRows(t *testing.T, r *run, srv *ingesttest.Server) {
	t.Helper()
	if rf := srv.Refused(); len(rf) > 0 {
		t.Errorf("the ingest server refused: %q", rf)
	}
	total := map[float64]float64{} // max_concurrency -> total_token_throughput
	files, _ := filepath.Glob(r.file("bench-*.json"))
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "-run-") {
			continue
		}
		var raw map[string]any
		data, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(data, &raw) != nil {
			t.Fatalf("%s: %v", f, err)
		}
		total[raw["max_concurrency"].(float64)] = raw["total_token_throughput"].(float64)
	}
	rows := srv.Rows("perf")
	if len(rows) == 0 || len(rows) != len(total) {
		t.Fatalf("%d perf rows for %d bench results\n%s", len(rows), len(total), r.log(t))
	}
	for _, row := range rows {
		b := row.Body
		if b["disagg"] != "true" || b["is_multinode"] != "true" || b["gpu_count"] != float64(8) {
			t.Errorf("PD perf row: disagg %v, is_multinode %v, gpu_count %v; want true, true, 8", b["disagg"], b["is_multinode"], b["gpu_count"])
		}
		want := total[b["conc"].(float64)] / 8
		if got, _ := b["tput_per_gpu"].(float64); math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("PD perf row at conc %v: tput_per_gpu %v, want %v (total / 8)", b["conc"], got, want)
		}
	}
}

// TestDisaggToolInstallFails: a PD job whose eval needs lm_eval, with pip
// failing while the instances load (60 s): the job fails with the install's
// status as soon as pip gave up, naming the tool, before any instance is
// ready, the router starts or a client runs.
func TestDisaggToolInstallFails(t *testing.T) {
	c := slurmtest.Require(t)
	bin := stub.Build(t, t.TempDir())
	script := pdWithEval(t)
	r := submit(t, c, bin, "pd_two_node", script, "WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_PIP_FAILS=3")
	took := r.wait(t, c, "FAILED", "127:0")
	if took > 45*time.Second {
		t.Errorf("the job took %v (queueing included) to fail; its instances load for 60 s", took)
	}
	log := r.log(t)
	if !strings.Contains(log, "the client tools' install failed (status 127, missing: lm_eval)") {
		t.Errorf("the job log does not name the failed install:\n%s", log)
	}
	if rs := r.records_(t, "vllm-router", "route"); len(rs) != 0 {
		t.Error("the router started although the client tools could not be installed")
	}
	if n := len(r.records_(t, "pip", "install")); n != 3 {
		t.Errorf("%d pip attempts, want 3", n)
	}
	r.noLeftovers(t, bin)
}

// pdWithEval lowers the pd_two_node golden's workload with an lm_eval
// task instead of bench_only, so its clients need a tool the image lacks.
func pdWithEval(t *testing.T) string {
	t.Helper()
	golden := filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "slurm", "pd_two_node.txtar")
	a, err := txtar.ParseFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var files []txtar.File
	for _, f := range a.Files {
		if strings.HasPrefix(f.Name, "out/") {
			continue
		}
		if f.Name == "workloads/pd_two_node.cue" {
			src := string(f.Data)
			with := strings.Replace(src, "\tbench_only:        true\n", "\tlm_eval: tasks: [{name: \"gsm8k\"}]\n", 1)
			if with == src {
				t.Fatal("pd_two_node.cue no longer says bench_only: true; update pdWithEval")
			}
			f.Data = []byte(with)
		}
		files = append(files, f)
	}
	archive := filepath.Join(t.TempDir(), "pd_with_eval.txtar")
	if err := os.WriteFile(archive, txtar.Format(&txtar.Archive{Comment: a.Comment, Files: files}), 0o644); err != nil {
		t.Fatal(err)
	}
	arts := goldentest.Open(t, archive, slurm.New()).Lower(t, slurm.New())
	if len(arts) != 1 {
		t.Fatalf("%d artifacts, want the one sbatch script", len(arts))
	}
	p := filepath.Join(t.TempDir(), arts[0].Path)
	if err := os.WriteFile(p, arts[0].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
