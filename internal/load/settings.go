package load

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/internal/bounded"
	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/schema"
)

var pathSettings = cue.ParsePath("settings")

// decodeSettings reads the package's `settings` (schema #Settings): the
// recipes checkout and the vLLM flag catalogs, a team's own included.
// pkgDir is the package directory settings' paths are relative to.
func (l *loader) decodeSettings(pkg cue.Value, pkgDir string) {
	if l.opts.VLLMFlags == nil {
		l.opts.VLLMFlags = vllmflags.Builtin()
	}
	sv := pkg.LookupPath(pathSettings)
	if !sv.Exists() {
		return
	}
	v := l.defs().settings.Unify(sv)
	if err := v.Validate(cue.Concrete(true), cue.Final()); err != nil {
		// Every error at once: CUE reports one per failing struct, so
		// each part is validated on its own too.
		before := len(l.res.Diags)
		parts := []cue.Value{v}
		for _, p := range []string{"recipes", "vllm_flags", "vllm_flags.images"} {
			parts = append(parts, v.LookupPath(cue.ParsePath(p)))
		}
		if it, err := v.LookupPath(cue.ParsePath("vllm_flags.catalogs")).Fields(); err == nil {
			for it.Next() {
				parts = append(parts, it.Value())
			}
		}
		for _, p := range parts {
			if p.Exists() {
				if err := p.Validate(cue.Concrete(true), cue.Final()); err != nil {
					l.addCUEError(err, pkg)
				}
			}
		}
		for i := before; i < len(l.res.Diags); i++ {
			d := &l.res.Diags[i]
			d.Path = "settings" + strings.TrimPrefix(d.Path, "#Settings")
			if d.File == "" || strings.HasPrefix(d.File, "schema/") || strings.Contains(d.File, "/schema/") {
				if pos := l.pos(sv, strings.TrimPrefix(strings.TrimPrefix(d.Path, "settings"), ".")); pos.IsValid() {
					d.File, d.Line, d.Column = l.rel(pos.Filename()), pos.Line(), pos.Column()
				}
			}
		}
		return
	}
	var s schema.Settings
	if err := v.Decode(&s); err != nil {
		l.addCUEError(err, pkg)
		return
	}
	errf := func(field, format string, args ...any) {
		l.report(diag.Error, "settings", sv, field, format, args...)
	}
	l.res.Settings = &s
	if s.Recipes != "" && (l.opts.RecipesDir == "" || l.opts.RecipesFrom == RecipesDefault) {
		l.opts.RecipesDir = filepath.FromSlash(s.Recipes)
		if !filepath.IsAbs(l.opts.RecipesDir) {
			l.opts.RecipesDir = filepath.Join(pkgDir, l.opts.RecipesDir)
		}
		l.opts.RecipesFrom = "settings.recipes"
		if pos := l.pos(sv, "recipes"); pos.IsValid() {
			l.opts.RecipesFrom = fmt.Sprintf("settings.recipes at %s:%d:%d", l.rel(pos.Filename()), pos.Line(), pos.Column())
		}
	}
	if s.VLLMFlags == nil {
		return
	}
	set := l.opts.VLLMFlags
	// Catalogs built on another (from) come after the one they build on.
	labels := make([]string, 0, len(s.VLLMFlags.Catalogs))
	for label := range s.VLLMFlags.Catalogs {
		labels = append(labels, label)
	}
	sort.Slice(labels, func(i, j int) bool {
		fi, fj := s.VLLMFlags.Catalogs[labels[i]].From != "", s.VLLMFlags.Catalogs[labels[j]].From != ""
		if fi != fj {
			return fj
		}
		return labels[i] < labels[j]
	})
	failed := map[string]bool{} // reported already: no second error for mapping to them
	for _, label := range labels {
		fc := s.VLLMFlags.Catalogs[label]
		field := "vllm_flags.catalogs." + check.Label(label)
		c := &vllmcatalog.Catalog{Label: label}
		var base *vllmcatalog.Catalog
		if fc.From != "" {
			b, ok := set.Lookup(fc.From)
			if !ok {
				if !failed[fc.From] {
					errf(field+".from", "no catalog is labelled %s; known: %s", fc.From, strings.Join(set.Labels(), ", "))
				}
				failed[label] = true
				continue
			}
			base = b
		}
		ok := true
		read := func(file, cmd string) []*vllmcatalog.Flag {
			if file == "" {
				if cmd == "serve" {
					return append([]*vllmcatalog.Flag(nil), base.Serve...)
				}
				return append([]*vllmcatalog.Flag(nil), base.Bench...)
			}
			p := filepath.Join(pkgDir, file)
			data, err := bounded.ReadFile(p, bounded.HelpFile)
			if err != nil {
				errf(field+"."+cmd+"_help", "cannot read %s (relative to the package directory %s): %v; save the image's `%s` output there", file, l.rel(pkgDir), err, helpCommand[cmd])
				ok = false
				return nil
			}
			fs, err := vllmcatalog.ParseHelp(string(data))
			if err != nil {
				errf(field+"."+cmd+"_help", "%s: %v; save the image's `%s` output there", file, err, helpCommand[cmd])
				ok = false
			}
			return fs
		}
		c.Serve, c.Bench = read(fc.ServeHelp, "serve"), read(fc.BenchHelp, "bench")
		if !ok {
			failed[label] = true
			continue
		}
		c.Serve = append(c.Serve, extraOptions(fc.ServeOptions)...)
		c.Bench = append(c.Bench, extraOptions(fc.BenchOptions)...)
		if err := set.Add(c); err != nil {
			errf(field, "%v", err)
		}
	}
	images := make([]string, 0, len(s.VLLMFlags.Images))
	for img := range s.VLLMFlags.Images {
		images = append(images, img)
	}
	sort.Strings(images)
	for _, img := range images {
		if failed[s.VLLMFlags.Images[img]] {
			continue
		}
		if err := set.Map(img, s.VLLMFlags.Images[img]); err != nil {
			errf("vllm_flags.images."+check.Label(img), "%v", err)
		}
	}
}

var helpCommand = map[string]string{"serve": "vllm serve --help=all", "bench": "vllm bench serve --help"}

func extraOptions(opts []schema.ExtraOption) []*vllmcatalog.Flag {
	var out []*vllmcatalog.Flag
	for _, o := range opts {
		f := &vllmcatalog.Flag{Options: []string{o.Option}, Kind: vllmcatalog.Switch}
		if o.TakesValue {
			f.Kind = vllmcatalog.Value
		}
		out = append(out, f)
	}
	return out
}

// RecipesDefault is Options.RecipesFrom for a recipes checkout found at a
// default place (./recipes): the package's settings.recipes wins over it.
const RecipesDefault = "the default ./recipes"

// ReadSettings reads only the settings of the workloads package in dir
// (wlc recipe needs the recipes checkout they name, not the workloads).
func ReadSettings(ctx *cue.Context, dir, cwd string) *Result {
	return Load(ctx, dir, cwd, Options{settingsOnly: true, VLLMFlags: vllmflags.Builtin()})
}
