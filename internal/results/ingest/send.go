package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wlcdev/wlc/internal/bounded"
	"github.com/wlcdev/wlc/internal/results/dashboard"
)

// Sender posts rows to the dashboards the way the job does (wlc_ingest_send
// in backends/runner/lib.sh): bearer token, JSON, X-Source on perf rows.
type Sender struct {
	PerfURL, EvalURL string
	Token            string
	// NoSamples skips eval sample rows (INGEST_NO_SAMPLES).
	NoSamples bool
	Client    *http.Client
}

// SenderFromEnv reads the endpoints, the token and INGEST_NO_SAMPLES.
func SenderFromEnv(getenv func(string) string) Sender {
	s := Sender{
		PerfURL:   getenv(dashboard.PerfURLEnv),
		EvalURL:   getenv(dashboard.EvalURLEnv),
		Token:     strings.TrimSpace(getenv(dashboard.TokenEnv)),
		NoSamples: getenv(dashboard.NoSamplesEnv) != "",
		Client:    &http.Client{Timeout: dashboard.TimeoutS * time.Second},
	}
	if s.PerfURL == "" {
		s.PerfURL = dashboard.PerfURL
	}
	if s.EvalURL == "" {
		s.EvalURL = dashboard.EvalURL
	}
	return s
}

// Post sends one row; perf says which endpoint.
func (s Sender) Post(ctx context.Context, perf bool, body []byte) error {
	url := s.EvalURL
	if perf {
		url = s.PerfURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	if perf {
		req.Header.Set("X-Source", dashboard.PerfSource)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("%s: HTTP %d: %s", url, resp.StatusCode, strings.Join(strings.Fields(string(msg)), " "))
	}
	return nil
}

// Kept is one row a job kept under <results>/ingest/.
type Kept struct {
	Path       string
	Perf       bool
	Definition string
	Body       []byte
}

// KeptRows lists the rows a job kept under results/ingest/ and, for a
// backend sweep, under each backend's results/<folder>/ingest/ (perf, then
// eval, each sorted by path).
func KeptRows(results string) ([]Kept, error) {
	var out []Kept
	for _, d := range []struct {
		dir  string
		perf bool
	}{{dashboard.PerfDir, true}, {dashboard.EvalDir, false}} {
		// A backend sweep keeps each backend's rows in its own folder
		// (results/<w>/attn-<backend>/ingest/...).
		files, err := filepath.Glob(filepath.Join(results, filepath.FromSlash(d.dir), "*.json"))
		if err != nil {
			return nil, err
		}
		swept, err := filepath.Glob(filepath.Join(results, "*", filepath.FromSlash(d.dir), "*.json"))
		if err != nil {
			return nil, err
		}
		files = append(files, swept...)
		sort.Strings(files)
		for _, f := range files {
			body, err := bounded.ReadFile(f, bounded.ResultFile)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read: %w", f, err)
			}
			k := Kept{Path: f, Perf: d.perf, Body: body, Definition: PerfRow}
			if !d.perf {
				var head struct {
					Kind string `json:"kind"`
				}
				json.Unmarshal(body, &head)
				k.Definition = map[string]string{"results": EvalResultsRow, "samples": EvalSamplesRow}[head.Kind]
			}
			out = append(out, k)
		}
	}
	return out, nil
}
