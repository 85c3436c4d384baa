package bktest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
)

// AgentAPI stands in for the Buildkite Agent API, for what the real
// buildkite-agent v3.78.0 does in the jobs of a wlc pipeline (its api/ and
// agent/ packages: artifacts.go, artifact_searcher.go, download.go,
// form_uploader.go, pipelines.go):
//
//   - artifact upload: POST jobs/<job>/artifacts with a batch (answered
//     with artifact ids and form-upload instructions), the multipart POST
//     of each file to the instructions' URL, PUT jobs/<job>/artifacts with
//     their states;
//   - artifact download: GET builds/<build>/artifacts/search?query=Q&scope=S
//     &state=finished (the build's finished artifacts whose path matches the
//     glob Q, of the job whose id, step key or label is S), then a plain GET
//     of each artifact's url (in Buildkite a signed storage URL: no agent
//     token);
//   - pipeline upload: POST jobs/<job>/pipelines?async=true, answered
//     synchronously (201), refused (422) over Buildkite's 500 jobs per
//     upload.
//
// It serves one build. Requests with another agent token are refused
// (401); any other request is answered 404 and listed by Unhandled, or
// passed to the Agent API ProxyTo names (the ingest stand-in's secrets).
type AgentAPI struct {
	srv *httptest.Server

	mu        sync.Mutex
	jobs      map[string]Job
	artifacts []*artifact
	pipelines []json.RawMessage
	downloads []string
	unhandled []string
	upstream  *httputil.ReverseProxy
}

// Job is one job of the build: its id and its step's key and label.
type Job struct {
	ID, StepKey, Label string
}

type artifact struct {
	id, job, path  string
	data           []byte
	state          string // new, then finished
	sha1, sha256   string // as the uploading agent declared them
	fileSize       int64
	globPath, abs  string
	uploadedAt     time.Time
	downloadSecret string
}

// AgentAPIBuild is the build's id (BUILDKITE_BUILD_ID), AgentAPIToken the
// agent token the stand-in accepts.
const (
	AgentAPIBuild = "01937d5c-0000-4000-8000-00000000b11d"
	AgentAPIToken = "agent-api-token-for-tests"
)

// JobsPerUpload is Buildkite's limit on the jobs one pipeline upload creates.
const JobsPerUpload = 500

// NewAgentAPI starts the stand-in; t's cleanup stops it.
func NewAgentAPI(t testing.TB) *AgentAPI {
	a := &AgentAPI{jobs: map[string]Job{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// AddJob registers a job of the build.
func (a *AgentAPI) AddJob(j Job) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.jobs[j.ID] = j
}

// ProxyTo passes the requests the stand-in does not serve to the Agent API
// at endpoint (…/v3), which wants token.
func (a *AgentAPI) ProxyTo(endpoint, token string) {
	u, err := url.Parse(strings.TrimSuffix(endpoint, "/"))
	if err != nil {
		panic(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.upstream = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.URL.Path = u.Path + strings.TrimPrefix(r.In.URL.Path, "/v3")
		r.Out.URL.RawPath = ""
		r.Out.Header.Set("Authorization", "Token "+token)
	}}
}

// Env is the environment the agent gives job: the Agent API endpoint and
// token, the build and the job's own variables.
func (a *AgentAPI) Env(job Job) []string {
	return []string{
		"BUILDKITE_AGENT_ENDPOINT=" + a.srv.URL + "/v3",
		"BUILDKITE_AGENT_ACCESS_TOKEN=" + AgentAPIToken,
		"BUILDKITE_BUILD_ID=" + AgentAPIBuild,
		"BUILDKITE_JOB_ID=" + job.ID,
		"BUILDKITE_STEP_KEY=" + job.StepKey,
		"BUILDKITE_LABEL=" + job.Label,
	}
}

// PutArtifact stores a finished artifact of job, as its `artifact upload`
// would.
func (a *AgentAPI) PutArtifact(job, p string, data []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s1, s256 := sha1.Sum(data), sha256.Sum256(data)
	a.artifacts = append(a.artifacts, &artifact{
		id: fmt.Sprintf("artifact-%d", len(a.artifacts)+1), job: job, path: p, data: data, state: "finished",
		sha1: hex.EncodeToString(s1[:]), sha256: hex.EncodeToString(s256[:]), fileSize: int64(len(data)),
		globPath: p, uploadedAt: time.Now().UTC(), downloadSecret: fmt.Sprintf("sig-%d", len(a.artifacts)+1),
	})
}

// Tamper replaces the stored bytes of every artifact at path p, as a
// changed storage object would be; the artifact's record keeps its sums.
func (a *AgentAPI) Tamper(p string, data []byte) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, art := range a.artifacts {
		if art.path == p {
			art.data = data
			n++
		}
	}
	return n
}

// Artifacts are the finished artifacts' paths and bytes.
func (a *AgentAPI) Artifacts() map[string][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[string][]byte{}
	for _, art := range a.artifacts {
		if art.state == "finished" {
			m[art.path] = art.data
		}
	}
	return m
}

// Pipelines are the uploaded pipelines (the JSON the agent sent, after
// its interpolation), in upload order.
func (a *AgentAPI) Pipelines() []json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]json.RawMessage(nil), a.pipelines...)
}

// Downloads are the paths of the artifacts downloaded, in order.
func (a *AgentAPI) Downloads() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.downloads...)
}

// Unhandled lists the requests the stand-in answered 404.
func (a *AgentAPI) Unhandled() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.unhandled...)
}

func (a *AgentAPI) serve(w http.ResponseWriter, r *http.Request) {
	if p, ok := strings.CutPrefix(r.URL.Path, "/download/"); ok {
		a.download(w, r, p)
		return
	}
	if r.URL.Path == "/upload" {
		a.formUpload(w, r)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/v3/")
	if !ok {
		a.notFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Token "+AgentAPIToken {
		apiError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	parts := strings.Split(p, "/")
	switch {
	case r.Method == http.MethodGet && len(parts) == 4 && parts[0] == "builds" && parts[2] == "artifacts" && parts[3] == "search":
		a.search(w, r, parts[1])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "jobs" && parts[2] == "artifacts":
		a.createArtifacts(w, r, parts[1])
	case r.Method == http.MethodPut && len(parts) == 3 && parts[0] == "jobs" && parts[2] == "artifacts":
		a.updateArtifacts(w, r, parts[1])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "jobs" && parts[2] == "pipelines":
		a.uploadPipeline(w, r, parts[1])
	default:
		a.mu.Lock()
		up := a.upstream
		a.mu.Unlock()
		if up != nil {
			up.ServeHTTP(w, r)
			return
		}
		a.notFound(w, r)
	}
}

func (a *AgentAPI) notFound(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.unhandled = append(a.unhandled, r.Method+" "+r.URL.String())
	a.mu.Unlock()
	apiError(w, http.StatusNotFound, "Not Found: method = "+r.Method+", url = "+r.URL.String())
}

func apiError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// job looks up a registered job; unknown ones are a 404, as in Buildkite.
func (a *AgentAPI) job(w http.ResponseWriter, id string) (Job, bool) {
	a.mu.Lock()
	j, ok := a.jobs[id]
	a.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "No job found with id "+id)
	}
	return j, ok
}

// searchResult is api.Artifact as the search answers it.
type searchResult struct {
	ID                string    `json:"id"`
	Path              string    `json:"path"`
	AbsolutePath      string    `json:"absolute_path"`
	GlobPath          string    `json:"glob_path"`
	FileSize          int64     `json:"file_size"`
	Sha1Sum           string    `json:"sha1sum"`
	Sha256Sum         string    `json:"sha256sum"`
	JobID             string    `json:"job_id"`
	CreatedAt         time.Time `json:"created_at"`
	URL               string    `json:"url"`
	UploadDestination string    `json:"upload_destination,omitempty"`
}

// search answers the build's artifacts matching the query glob, in the
// scope (a job id, step key or label) if one is given, in the state asked
// for; without include_duplicates, the latest artifact of each path.
func (a *AgentAPI) search(w http.ResponseWriter, r *http.Request, build string) {
	if build != AgentAPIBuild {
		apiError(w, http.StatusNotFound, "No build found with id "+build)
		return
	}
	q := r.URL.Query()
	query, scope, state := q.Get("query"), q.Get("scope"), q.Get("state")
	if query == "" {
		apiError(w, http.StatusUnprocessableEntity, "query is required")
		return
	}
	dups := q.Get("include_duplicates") == "true"
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []searchResult{}
	latest := map[string]int{}
	for _, art := range a.artifacts {
		if ok, _ := path.Match(query, art.path); !ok && query != art.path {
			continue
		}
		if state != "" && art.state != state {
			continue
		}
		if scope != "" {
			j := a.jobs[art.job]
			if scope != j.ID && scope != j.StepKey && scope != j.Label {
				continue
			}
		}
		res := searchResult{
			ID: art.id, Path: art.path, AbsolutePath: art.abs, GlobPath: art.globPath, FileSize: art.fileSize,
			Sha1Sum: art.sha1, Sha256Sum: art.sha256, JobID: art.job, CreatedAt: art.uploadedAt,
			URL: a.srv.URL + "/download/" + art.id + "?signature=" + art.downloadSecret,
		}
		if i, ok := latest[art.path]; ok && !dups {
			out[i] = res
			continue
		}
		latest[art.path] = len(out)
		out = append(out, res)
	}
	writeJSON(w, http.StatusOK, out)
}

// download serves an artifact's bytes at its signed URL.
func (a *AgentAPI) download(w http.ResponseWriter, r *http.Request, id string) {
	a.mu.Lock()
	var found *artifact
	for _, art := range a.artifacts {
		if art.id == id && art.state == "finished" && r.URL.Query().Get("signature") == art.downloadSecret {
			found = art
		}
	}
	var data []byte
	if found != nil {
		data = found.data
		a.downloads = append(a.downloads, found.path)
	}
	a.mu.Unlock()
	if found == nil {
		http.Error(w, "AccessDenied", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(data)
}

// batch is api.ArtifactBatch.
type batch struct {
	ID        string `json:"id"`
	Artifacts []struct {
		Path         string `json:"path"`
		AbsolutePath string `json:"absolute_path"`
		GlobPath     string `json:"glob_path"`
		FileSize     int64  `json:"file_size"`
		Sha1Sum      string `json:"sha1sum"`
		Sha256Sum    string `json:"sha256sum"`
	} `json:"artifacts"`
	UploadDestination string `json:"upload_destination"`
}

// createArtifacts records a batch of new artifacts and tells the agent to
// upload each file as a form (FormUploader: the "path" field, the file as
// "file").
func (a *AgentAPI) createArtifacts(w http.ResponseWriter, r *http.Request, jobID string) {
	if _, ok := a.job(w, jobID); !ok {
		return
	}
	var b batch
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.ID == "" || len(b.Artifacts) == 0 {
		apiError(w, http.StatusUnprocessableEntity, fmt.Sprintf("a batch needs an id and artifacts (%v)", err))
		return
	}
	if b.UploadDestination != "" {
		apiError(w, http.StatusUnprocessableEntity, "this stand-in stores artifacts itself: no upload destination")
		return
	}
	a.mu.Lock()
	ids := make([]string, len(b.Artifacts))
	for i, in := range b.Artifacts {
		n := len(a.artifacts) + 1
		ids[i] = fmt.Sprintf("artifact-%d", n)
		a.artifacts = append(a.artifacts, &artifact{
			id: ids[i], job: jobID, path: in.Path, state: "new", sha1: in.Sha1Sum, sha256: in.Sha256Sum,
			fileSize: in.FileSize, globPath: in.GlobPath, abs: in.AbsolutePath, uploadedAt: time.Now().UTC(),
			downloadSecret: fmt.Sprintf("sig-%d", n),
		})
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"id":           b.ID,
		"artifact_ids": ids,
		"upload_instructions": map[string]any{
			"data":   map[string]string{"path": "${artifact:path}"},
			"action": map[string]string{"url": a.srv.URL, "method": "POST", "path": "/upload", "file_input": "file"},
		},
	})
}

// formUpload takes one file of a batch: the first new artifact at its
// path receives it.
func (a *AgentAPI) formUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := r.FormValue("path")
	f, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, "no file: "+err.Error(), http.StatusBadRequest)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, art := range a.artifacts {
		if art.path == p && art.state == "new" && art.data == nil {
			art.data = data
			w.WriteHeader(http.StatusCreated)
			return
		}
	}
	http.Error(w, "no artifact waits for "+p, http.StatusBadRequest)
}

// updateArtifacts sets the states the agent reports; an artifact becomes
// finished only once its file arrived.
func (a *AgentAPI) updateArtifacts(w http.ResponseWriter, r *http.Request, jobID string) {
	if _, ok := a.job(w, jobID); !ok {
		return
	}
	var req struct {
		Artifacts []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"artifacts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	a.mu.Lock()
	var missing []string
	for _, u := range req.Artifacts {
		for _, art := range a.artifacts {
			if art.id != u.ID || art.job != jobID {
				continue
			}
			if u.State == "finished" && art.data == nil {
				missing = append(missing, u.ID)
				continue
			}
			art.state = u.State
		}
	}
	a.mu.Unlock()
	if len(missing) > 0 {
		apiError(w, http.StatusUnprocessableEntity, "never uploaded: "+strings.Join(missing, ", "))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// uploadPipeline accepts a pipeline (api.PipelineChange) of at most
// JobsPerUpload jobs.
func (a *AgentAPI) uploadPipeline(w http.ResponseWriter, r *http.Request, jobID string) {
	if _, ok := a.job(w, jobID); !ok {
		return
	}
	var change struct {
		UUID     string          `json:"uuid"`
		Pipeline json.RawMessage `json:"pipeline"`
	}
	if err := json.NewDecoder(r.Body).Decode(&change); err != nil || change.UUID == "" || len(change.Pipeline) == 0 {
		apiError(w, http.StatusUnprocessableEntity, fmt.Sprintf("a pipeline change needs a uuid and a pipeline (%v)", err))
		return
	}
	var p struct {
		Steps []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(change.Pipeline, &p); err != nil {
		apiError(w, http.StatusUnprocessableEntity, "pipeline: "+err.Error())
		return
	}
	if n := countJobs(p.Steps); n > JobsPerUpload {
		apiError(w, http.StatusUnprocessableEntity, fmt.Sprintf("The number of jobs in this upload (%d) exceeds your organization limit of %d", n, JobsPerUpload))
		return
	}
	a.mu.Lock()
	a.pipelines = append(a.pipelines, change.Pipeline)
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{})
}

// countJobs counts the jobs steps create: a command step is one (wlc
// writes no parallelism or matrix), a group its steps', others none.
func countJobs(steps []json.RawMessage) int {
	n := 0
	for _, s := range steps {
		var st struct {
			Command  json.RawMessage   `json:"command"`
			Commands json.RawMessage   `json:"commands"`
			Group    *string           `json:"group"`
			Steps    []json.RawMessage `json:"steps"`
		}
		if json.Unmarshal(s, &st) != nil {
			continue
		}
		switch {
		case st.Group != nil:
			n += countJobs(st.Steps)
		case st.Command != nil || st.Commands != nil:
			n++
		}
	}
	return n
}
