// Package ingesttest is a local stand-in for the perf and eval dashboards'
// ingest endpoints, for tests: it listens on the loopback interface only
// and checks what the real endpoints check (POST, the bearer token, a JSON
// body of the right shape; 401 or 4xx with the reason otherwise), and
// records every row it accepted.
package ingesttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wlcdev/wlc/internal/results/dashboard"
	"github.com/wlcdev/wlc/internal/results/ingest"
)

// Row is one accepted POST.
type Row struct {
	Endpoint   string // "perf" or "eval"
	Definition string // the schema/ingest.cue definition it matched
	Header     http.Header
	Raw        []byte
	Body       map[string]any
}

// Server is a running stand-in.
type Server struct {
	Token string
	// NoAuth accepts requests without a bearer token (perf-eval's branches
	// before #62 sent none).
	NoAuth bool
	srv    *httptest.Server
	// jobAPI is the socket of the Buildkite Job API stand-in.
	jobAPI       string
	jobAPIServer *http.Server
	mu           sync.Mutex
	rows         []Row
	// Refused are the requests answered with an error, one line each.
	refused []string
}

// New starts a server on 127.0.0.1 expecting token; it stops when t ends.
func New(t testing.TB, token string) *Server {
	s := Start(token)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server on 127.0.0.1 expecting token; Close stops it.
func Start(token string) *Server {
	s := &Server{Token: token}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.startJobAPI()
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.srv.Close()
	if s.jobAPIServer != nil {
		s.jobAPIServer.Close()
		os.RemoveAll(filepath.Dir(s.jobAPI))
	}
}

const jobAPIToken = "job-api-token-for-tests"

// startJobAPI serves the agent's Job API redaction endpoint on a unix
// socket (POST /api/current-job/v0/redactions, bearer token), as a
// running job's agent does. A failure leaves it off: secret get then
// fails, as in a job without the Job API.
func (s *Server) startJobAPI() {
	dir, err := os.MkdirTemp("", "bkjob")
	if err != nil {
		return
	}
	s.jobAPI = filepath.Join(dir, "job-api.sock")
	l, err := net.Listen("unix", s.jobAPI)
	if err != nil {
		return
	}
	s.jobAPIServer = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Redact string `json:"redact"`
		}
		if r.Header.Get("Authorization") != "Bearer "+jobAPIToken || r.Method != http.MethodPost ||
			r.URL.Path != "/api/current-job/v0/redactions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"redacted": req.Redact})
	})}
	go s.jobAPIServer.Serve(l)
}

// PerfURL and EvalURL are the two endpoints.
func (s *Server) PerfURL() string { return s.srv.URL + "/perf/" }
func (s *Server) EvalURL() string { return s.srv.URL + "/eval/" }

// AgentToken is the Buildkite agent access token the secret store wants.
const AgentToken = "agent-access-token-for-tests"

// AgentEnv points the real buildkite-agent's `secret get` at the server's
// stand-in for the Agent API (GET /v3/jobs/<job>/secrets?key=K with
// "Authorization: Token <agent token>", answering {"key","value","uuid"}),
// which holds INGEST_BEARER_TOKEN = the server's token.
func (s *Server) AgentEnv() []string {
	return []string{
		"BUILDKITE_AGENT_ENDPOINT=" + s.srv.URL + "/agent/v3",
		"BUILDKITE_AGENT_ACCESS_TOKEN=" + AgentToken,
		// The job's Job API, where `secret get` registers the value
		// for log redaction.
		"BUILDKITE_AGENT_JOB_API_SOCKET=" + s.jobAPI,
		"BUILDKITE_AGENT_JOB_API_TOKEN=" + jobAPIToken,
	}
}

// Env points a job at the server with the server's token.
func (s *Server) Env() []string {
	return []string{
		dashboard.PerfURLEnv + "=" + s.PerfURL(),
		dashboard.EvalURLEnv + "=" + s.EvalURL(),
		dashboard.TokenEnv + "=" + s.Token,
	}
}

// Rows are the accepted rows of endpoint ("perf" or "eval"), in arrival order.
func (s *Server) Rows(endpoint string) []Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Row
	for _, r := range s.rows {
		if r.Endpoint == endpoint {
			out = append(out, r)
		}
	}
	return out
}

// Refused lists the refused requests.
func (s *Server) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/agent/v3/") {
		s.secret(w, r)
		return
	}
	code, msg := s.accept(r)
	if code != http.StatusOK {
		s.mu.Lock()
		s.refused = append(s.refused, fmt.Sprintf("%d %s", code, msg))
		s.mu.Unlock()
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"status":"ok"}`)
}

// secret answers the Agent API's secret lookup for any job.
func (s *Server) secret(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/agent/v3/"), "/")
	switch {
	case r.Header.Get("Authorization") != "Token "+AgentToken:
		http.Error(w, `{"message":"Unauthorized"}`, http.StatusUnauthorized)
	case r.Method != http.MethodGet || len(parts) != 3 || parts[0] != "jobs" || parts[2] != "secrets" ||
		!strings.EqualFold(r.URL.Query().Get("key"), dashboard.TokenEnv):
		http.Error(w, `{"message":"Not Found: method = `+r.Method+`, url = `+r.URL.String()+`"}`, http.StatusNotFound)
	default:
		b, _ := json.Marshal(map[string]string{"key": dashboard.TokenEnv, "value": s.Token, "uuid": "secret-uuid"})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}
}

func (s *Server) accept(r *http.Request) (int, string) {
	endpoint := strings.Trim(r.URL.Path, "/")
	if endpoint != "perf" && endpoint != "eval" {
		return http.StatusNotFound, "no endpoint " + r.URL.Path
	}
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "POST only"
	}
	if !s.NoAuth && r.Header.Get("Authorization") != "Bearer "+s.Token {
		return http.StatusUnauthorized, "missing or wrong bearer token"
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return http.StatusUnsupportedMediaType, "Content-Type " + ct + ", want application/json"
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return http.StatusBadRequest, err.Error()
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return http.StatusBadRequest, "body is not a JSON object: " + err.Error()
	}
	def := ingest.PerfRow
	if endpoint == "eval" {
		switch body["kind"] {
		case "results":
			def = ingest.EvalResultsRow
		case "samples":
			def = ingest.EvalSamplesRow
		default:
			return http.StatusBadRequest, fmt.Sprintf("kind %v, want results or samples", body["kind"])
		}
	}
	if err := ingest.Validate(def, raw); err != nil {
		return http.StatusUnprocessableEntity, err.Error()
	}
	s.mu.Lock()
	s.rows = append(s.rows, Row{Endpoint: endpoint, Definition: def, Header: r.Header.Clone(), Raw: raw, Body: body})
	s.mu.Unlock()
	return http.StatusOK, ""
}
