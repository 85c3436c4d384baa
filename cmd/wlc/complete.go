package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// names lists the workloads or profiles of the package in dir whose name
// starts with prefix, for shell completion; a package with errors still
// completes what loaded.
func (e *env) names(dir string, profiles bool, prefix ...string) []string {
	var out []string
	for _, n := range e.allNames(dir, profiles) {
		if len(prefix) == 0 || strings.HasPrefix(n, prefix[0]) {
			out = append(out, n)
		}
	}
	return out
}

func (e *env) allNames(dir string, profiles bool) []string {
	r, _ := e.loadWorkloads(dir, e.loadOptions(""))
	var out []string
	if profiles {
		for name := range r.Profiles {
			out = append(out, name)
		}
		sort.Strings(out)
		return out
	}
	for _, w := range r.Workloads {
		out = append(out, w.Name)
	}
	return out
}

// completeNames completes a workload (or profile) name as the argument at
// position pos; the package directory is the argument at dirPos if given.
func (e *env) completeNames(pos, dirPos int, profiles bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) != pos {
			if len(args) == dirPos {
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return e.names(e.dirArg(args, dirPos), profiles, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNameList completes the last entry of a comma-separated flag value
// (--workloads a,b,<TAB>); the package directory is the argument at dirPos.
func (e *env) completeNameList(dirPos int, profiles bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix := ""
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			prefix = toComplete[:i+1]
		}
		var out []string
		for _, n := range e.names(e.dirArg(args, dirPos), profiles, strings.TrimPrefix(toComplete, prefix)) {
			out = append(out, prefix+n)
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
