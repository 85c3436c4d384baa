package recipes

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/encoding/yaml"

	"github.com/wlcdev/wlc/internal/bounded"
	"github.com/wlcdev/wlc/internal/diag"
)

// Set is one loaded recipes directory.
type Set struct {
	// Dir is the directory as given.
	Dir    string
	Schema *Schema
	// Profiles are taxonomy.yaml's hardware profiles by id.
	Profiles map[string]*Profile
	// Strategies are keyed by their name field.
	Strategies map[string]*Strategy
	// Recipes are sorted by path.
	Recipes []*Recipe
	// Diags holds the schema errors found while loading.
	Diags diag.List

	taxonomy node
}

// Profile is one taxonomy hardware profile.
type Profile struct {
	ID, Brand, Generation string
	GPUCount, VRAMGB      int
	Scalable, Restricted  bool
	n                     node
}

// PerGPU is the memory of one GPU in GB.
func (p *Profile) PerGPU() float64 { return float64(p.VRAMGB) / float64(p.GPUCount) }

// Strategy is one strategies/*.yaml file.
type Strategy struct {
	Name, DeployType, ParallelFlag, Parallelism string
	MinGPUs, MaxGPUs                            int
	MultiNode, MoE                              bool
	n                                           node
}

// Recipe is one models/<org>/<repo>.yaml file.
type Recipe struct {
	// Rel is the path below the recipes dir, slash-separated.
	Rel string
	// ID is <org>/<repo> from the path.
	ID string
	// ModelID is model.model_id.
	ModelID string
	n       node
}

// Load reads dir (taxonomy.yaml, strategies/*.yaml, models/**/*.yaml)
// with the schema compiled in ctx. cwd makes file names relative.
func Load(ctx *cue.Context, dir, cwd string) (*Set, error) {
	sch, err := CompileSchema(ctx)
	if err != nil {
		return nil, err
	}
	return LoadWith(ctx, sch, dir, cwd)
}

// LoadWith is Load with an already compiled schema.
func LoadWith(ctx *cue.Context, sch *Schema, dir, cwd string) (*Set, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a recipes directory (want taxonomy.yaml, strategies/ and models/ from github.com/vllm-project/recipes)", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "taxonomy.yaml")); err != nil {
		return nil, fmt.Errorf("%s has no taxonomy.yaml; give the root of a vllm-project/recipes checkout", dir)
	}
	s := &Set{Dir: dir, Schema: sch, Profiles: map[string]*Profile{}, Strategies: map[string]*Strategy{}}
	l := &loader{ctx: ctx, set: s, dir: dir, cwd: cwd}

	if n, ok := l.file("taxonomy.yaml", sch.Taxonomy); ok {
		s.taxonomy = n
		for _, f := range n.get("hardware_profiles").fields() {
			p := &Profile{ID: f.name, Brand: f.n.get("brand").str(), Generation: f.n.get("generation").str(), n: f.n, Scalable: true}
			if p.Generation == "" {
				g := f.n.get("gpu_generation").strs()
				if len(g) > 0 {
					p.Generation = g[0]
				}
			}
			p.GPUCount, _ = f.n.get("gpu_count").integer()
			p.VRAMGB, _ = f.n.get("vram_gb").integer()
			if b, ok := f.n.get("scalable").boolean(); ok {
				p.Scalable = b
			}
			p.Restricted, _ = f.n.get("restricted").boolean()
			s.Profiles[p.ID] = p
		}
	}

	strategyFiles, _ := filepath.Glob(filepath.Join(dir, "strategies", "*.yaml"))
	sort.Strings(strategyFiles)
	for _, f := range strategyFiles {
		rel, _ := filepath.Rel(dir, f)
		n, ok := l.file(filepath.ToSlash(rel), sch.Strategy)
		if !ok {
			continue
		}
		st := &Strategy{
			Name:         n.get("name").str(),
			DeployType:   n.get("deploy_type").str(),
			ParallelFlag: n.get("parallel_flag").str(),
			Parallelism:  n.get("parallelism").str(),
			n:            n,
		}
		hm := n.get("hardware_match")
		st.MinGPUs, _ = hm.get("min_gpus").integer()
		st.MaxGPUs, _ = hm.get("max_gpus").integer()
		st.MultiNode, _ = hm.get("multi_node").boolean()
		st.MoE = hm.get("architecture").str() == "moe"
		if prev, dup := s.Strategies[st.Name]; dup {
			s.Diags.Errorf(n.file, n.get("name").pos().Line, n.get("name").pos().Column, "name",
				"strategy %s is defined twice (also in %s); the upstream loader keeps whichever it reads last: remove one", st.Name, prev.n.file)
		}
		s.Strategies[st.Name] = st
	}

	var models []string
	_ = filepath.WalkDir(filepath.Join(dir, "models"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			models = append(models, p)
		}
		return nil
	})
	sort.Strings(models)
	for _, f := range models {
		rel, _ := filepath.Rel(dir, f)
		rel = filepath.ToSlash(rel)
		n, ok := l.file(rel, sch.Recipe)
		if !ok {
			continue
		}
		r := &Recipe{Rel: rel, ID: strings.TrimSuffix(strings.TrimPrefix(rel, "models/"), ".yaml"), n: n}
		r.ModelID = n.get("model", "model_id").str()
		s.Recipes = append(s.Recipes, r)
	}
	s.Diags = s.Diags.Sorted()
	return s, nil
}

type loader struct {
	ctx      *cue.Context
	set      *Set
	dir, cwd string
}

// display is how a file is named in findings: relative to cwd when it is
// below it, else the recipes dir joined with rel.
func (l *loader) display(rel string) string {
	abs, err := filepath.Abs(filepath.Join(l.dir, filepath.FromSlash(rel)))
	if err == nil && l.cwd != "" {
		if r, err := filepath.Rel(l.cwd, abs); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(filepath.Join(l.dir, filepath.FromSlash(rel)))
}

// file parses one YAML file and validates it against def. It returns the
// file's own value (positions are the YAML's) and whether it parsed; a
// file that parses but violates the schema is still returned, so every
// other check runs too.
func (l *loader) file(rel string, def cue.Value) (node, bool) {
	name := l.display(rel)
	data, err := bounded.ReadFile(filepath.Join(l.dir, filepath.FromSlash(rel)), bounded.YAMLFile)
	if err != nil {
		l.set.Diags.Errorf(name, 0, 0, "", "cannot read: %v", err)
		return node{}, false
	}
	f, err := yaml.Extract(name, data)
	if err != nil {
		// A YAML error has no position and an empty Msg, only its text:
		// "name:line: message" or "name: message".
		for _, e := range cueerrors.Errors(err) {
			msg, line, col := strings.TrimPrefix(e.Error(), name+":"), 0, 0
			if n, rest, ok := strings.Cut(msg, ": "); ok {
				if i, aerr := strconv.Atoi(n); aerr == nil && i >= 1 {
					// The column is where the line's text starts.
					msg, line, col = rest, i, 1
					if lines := strings.Split(string(data), "\n"); i <= len(lines) {
						col += len(lines[i-1]) - len(strings.TrimLeft(lines[i-1], " \t"))
					}
				}
			}
			l.set.Diags.Errorf(name, line, col, "", "the YAML does not parse: %s; fix the file (a recipe is YAML, reference/recipes.md §1)", strings.TrimSpace(msg))
		}
		return node{}, false
	}
	v := l.ctx.BuildFile(f)
	if err := v.Err(); err != nil {
		l.addError(name, err, node{})
		return node{}, false
	}
	n := node{v: v, file: name}
	if err := def.Unify(v).Validate(cue.Concrete(true)); err != nil {
		l.addError(name, err, n)
	}
	return n, true
}

// addError turns a CUE error list into diagnostics at the YAML position,
// or, when CUE only names the schema (a missing required field), at the
// nearest enclosing value of the file.
func (l *loader) addError(file string, err error, n node) {
	seen := map[string]bool{}
	for _, e := range cueerrors.Errors(err) {
		path := e.Path()
		if len(path) > 0 && strings.HasPrefix(path[0], "#") {
			path = path[1:]
		}
		format, args := e.Msg()
		msg := strings.TrimSuffix(fmt.Sprintf(format, args...), ":")
		var pos Pos
		for _, p := range cueerrors.Positions(e) {
			if p.Filename() == file {
				pos = posOf(file, p)
				break
			}
		}
		if pos.Line == 0 && n.exists() {
			for k := len(path); k >= 0; k-- {
				if m := n.get(path[:k]...); m.exists() {
					pos = m.pos()
					break
				}
			}
		}
		if pos.Line == 0 {
			pos.File = file
		}
		msg = explain(msg, path)
		key := strings.Join(path, ".") + "\x00" + msg
		if seen[key] {
			continue
		}
		seen[key] = true
		l.set.Diags.Errorf(pos.File, pos.Line, pos.Column, joinPath(path), "%s", msg)
	}
}

// explain adds what would fix the commonest schema errors.
func explain(msg string, path []string) string {
	switch {
	case strings.Contains(msg, "field not allowed"):
		return msg + ": the upstream format has no such key here; check its spelling against reference/recipes.md §1"
	case strings.Contains(msg, "field is required but not present"):
		return msg + ": add it (reference/recipes.md §1 lists the required keys)"
	}
	return msg
}

func joinPath(p []string) string {
	var b strings.Builder
	for i, e := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e)
	}
	return b.String()
}
