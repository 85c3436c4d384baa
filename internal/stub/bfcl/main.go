// Command bfcl is a stand-in for the BFCL CLI in tests: `bfcl generate`
// sends one chat completion to $OPENAI_BASE_URL and writes
// $BFCL_PROJECT_ROOT/result/generate.json; `bfcl evaluate` needs that file
// and writes $BFCL_PROJECT_ROOT/score/score.json. It records its argv and
// env (internal/stub).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wlcdev/wlc/internal/stub"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || (args[0] != "generate" && args[0] != "evaluate") {
		fail(fmt.Sprintf("unsupported command %q", args))
	}
	stub.Write("bfcl", args[0], nil)
	root, base := os.Getenv("BFCL_PROJECT_ROOT"), os.Getenv("OPENAI_BASE_URL")
	model, _ := stub.Flag(args, "--model")
	cats, _ := stub.Flag(args, "--test-category")
	if root == "" || model == "" || cats == "" {
		fail("need BFCL_PROJECT_ROOT, --model and --test-category")
	}
	gen := filepath.Join(root, "result", "generate.json")
	var out string
	var res any
	switch args[0] {
	case "generate":
		if base == "" {
			fail("need OPENAI_BASE_URL")
		}
		body, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 4,
			"messages": []map[string]string{{"role": "user", "content": "call a tool"}}})
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Post(strings.TrimRight(base, "/")+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			fail(err.Error())
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			fail("chat completion: " + resp.Status)
		}
		out, res = gen, map[string]any{"model": model, "categories": strings.Split(cats, ",")}
	case "evaluate":
		if _, err := os.Stat(gen); err != nil {
			fail("no generate results: " + err.Error())
		}
		out, res = filepath.Join(root, "score", "score.json"), map[string]any{"model": model, "overall_accuracy": 1.0}
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		fail(err.Error())
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "stub bfcl:", msg)
	os.Exit(1)
}
