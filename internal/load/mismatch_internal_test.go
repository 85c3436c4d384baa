package load

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// TestPlainMismatch: CUE's "conflicting values A and B (mismatched types
// KA and KB)" in the user's terms, whichever operand holds " and ".
func TestPlainMismatch(t *testing.T) {
	env := `{[#EnvName]:string,[=~"^INGEST_URL$"]:error("read by the sender, which never sees the server and its clients")}`
	for _, c := range []struct{ values, ka, kb, src, want string }{
		{`"x" and ` + env, "string", "struct", `"x"`, `must be a struct, not the string "x"`},
		{`null and ` + env, "null", "struct", `null`, `must be a struct, not null`},
		{env + ` and "x"`, "struct", "string", `"x"`, `must be a struct, not the string "x"`},
		{`"a and b" and int`, "string", "int", `"a and b"`, `must be an integer, not the string "a and b"`},
		{`"a and b" and {a: 1}`, "string", "struct", `"a and b" // why`, `must be a struct, not the string "a and b"`},
		{`8.0 and int`, "float", "int", `8.0`, `must be an integer, not the float 8.0; write 8`},
		{`"8" and int`, "string", "int", `"8"`, `must be an integer, not the string "8"; write 8`},
		{`"0.9" and number`, "string", "number", `"0.9"`, `must be a number, not the string "0.9"; write 0.9`},
		{`"yes" and bool`, "string", "bool", `"yes"`, `must be a bool (true or false), not the string "yes"`},
		{`true and string`, "bool", "string", `true`, `must be a string, not the bool true; write "true"`},
		{`1E+12 and string`, "int", "string", `1e12`, `must be a string, not the int 1e12; write "1e12"`},
		// A list's element written as its name alone.
		{`"gsm8k" and {name!:=~"^a and b$",num_fewshot:int}`, "string", "struct", `"gsm8k"`, `must be a struct, not the string "gsm8k"; write {name: "gsm8k"}`},
		{`"x" and {count!:int}`, "string", "struct", `"x"`, `must be a struct, not the string "x"`},
		// A composite value CUE prints its own way: its kind, not its text.
		{`[{name:"a and b"}] and {tasks!:[...#T]}`, "list", "struct", `[{name: "a and b"}]`, `must be a struct, not a list`},
		// A multi-line bytes literal, which CUE prints on one line.
		{`'gsm8k' and =~"^a and b$"`, "bytes", "string", "'''", `must be a string, not the bytes 'gsm8k'`},
		{`'x and y' and =~"^a$"`, "bytes", "string", "'''", `must be a string, not the bytes 'x and y'`},
		{`=~"^a$" and 'x'`, "string", "bytes", "'''", `must be a string, not the bytes 'x'`},
	} {
		got, ok := plainMismatch(c.values, c.ka, c.kb, c.src)
		if !ok || got != c.want {
			t.Errorf("plainMismatch(%s, %s, %s, source %s) = %q, %v; want %q", c.values, c.ka, c.kb, c.src, got, ok, c.want)
		}
	}
	if got, ok := plainMismatch(`{a: 1} and {b: 2}`, "struct", "struct", `x`); ok {
		t.Errorf("a reading with no user's operand gave %q", got)
	}
}

// A value every alternative of a disjunction refuses is one finding, the
// scalar first, with the scalar's fix only.
func TestPlainMismatchesDisjunction(t *testing.T) {
	got := mismatchMessages(t, "a: max_concurrency: \"4\"\nb: extra_args: \"--enforce-eager --max-num-seqs 4\"\n", nil,
		inA(1, 21, "a.max_concurrency", `conflicting values "4" and [...int] (mismatched types string and list)`),
		inA(1, 21, "a.max_concurrency", `conflicting values "4" and int (mismatched types string and int)`),
		inA(2, 16, "b.extra_args", `conflicting values "--enforce-eager --max-num-seqs 4" and [...string] (mismatched types string and list)`),
	)
	want := []string{
		`must be an integer or a list, not the string "4"; write 4`,
		`must be a list, not the string "--enforce-eager --max-num-seqs 4"; write ["--enforce-eager", "--max-num-seqs", "4"]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("plainMismatches:\n got %q\nwant %q", got, want)
	}
}

// mismatchMessages is plainMismatches' messages for findings in a.cue,
// whose source is src.
func mismatchMessages(t *testing.T, src string, elem func(string) (string, bool), in ...diag.Diagnostic) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plainMismatches(in, newSources(dir), elem, nil) {
		got = append(got, d.Message)
	}
	return got
}

// inA is an error finding at a.cue:line:col.
func inA(line, col int, path, msg string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, File: "a.cue", Line: line, Column: col, Path: path, Message: msg}
}

// plainMismatch is the finding's message for one mismatch of kinds ka
// and kb between values, the user's source at it src.
func plainMismatch(values, ka, kb, src string) (string, bool) {
	r, ok := mismatchOperands(values, ka, kb, src)
	if !ok {
		return "", false
	}
	return r.message(kindNames[r.want], r.fix()), true
}

// A string where a list of structs goes is fixed by the field naming an
// element, or not at all; a list of scalars takes the string's words.
func TestPlainMismatchesStructList(t *testing.T) {
	elems := map[string]string{"#LMEvalTask": "name", "#SweepShape": ""}
	elem := func(def string) (string, bool) {
		key, ok := elems[def]
		return key, ok
	}
	got := mismatchMessages(t, "a: tasks: \"gsm8k\"\nb: shapes: \"1024\"\nc: test_categories: \"multiple\"\nd: tasks: {name: \"gsm8k\"}\ne: concurrency: {start: 1}\n", elem,
		inA(1, 11, "a.tasks", `conflicting values "gsm8k" and [...#LMEvalTask] (mismatched types string and list)`),
		inA(2, 12, "b.shapes", `conflicting values "1024" and [#SweepShape,...#SweepShape] (mismatched types string and list)`),
		inA(3, 21, "c.test_categories", `conflicting values "multiple" and [...#BFCLCategory] (mismatched types string and list)`),
		inA(4, 11, "d.tasks", `conflicting values {name:"gsm8k"} and [...#LMEvalTask] (mismatched types struct and list)`),
		// A struct where a list of scalars goes (beside a struct
		// alternative, a concurrency ladder): CUE's words stay.
		inA(5, 17, "e.concurrency", `conflicting values {start:1} and [#Concurrency,...#Concurrency] (mismatched types struct and list)`),
	)
	want := []string{
		`must be a list, not the string "gsm8k"; write [{name: "gsm8k"}]`,
		`must be a list, not the string "1024"`,
		`must be a list, not the string "multiple"; write ["multiple"]`,
		`must be a list, not a struct; write it in brackets, the list's one element: [{...}]`,
		`conflicting values {start:1} and [#Concurrency,...#Concurrency] (mismatched types struct and list)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// structElem reads the schema: #LMEvalTask is named by its required
// name, #SweepShape by nothing, #BFCLCategory is no struct.
func TestStructElem(t *testing.T) {
	inst, err := schema.Instance()
	if err != nil {
		t.Fatal(err)
	}
	v := cuecontext.New().BuildInstance(inst)
	if v.Err() != nil {
		t.Fatal(v.Err())
	}
	for def, want := range map[string]string{"#LMEvalTask": "name", "#BenchConfig": "name", "#SweepShape": ""} {
		if key, ok := structElem(v, def); !ok || key != want {
			t.Errorf("structElem(%s) = %q, %v; want %q", def, key, ok, want)
		}
	}
	if _, ok := structElem(v, "#BFCLCategory"); ok {
		t.Error("#BFCLCategory, a string, reads as a struct")
	}
}
