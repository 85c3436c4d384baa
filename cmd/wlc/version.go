package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print wlc's version and the CUE version it embeds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v, cueV := version, "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				if v == "" {
					v = bi.Main.Version
				}
				for _, d := range bi.Deps {
					if d.Path == "cuelang.org/go" {
						cueV = d.Version
					}
				}
			}
			if v == "" {
				v = "(devel)"
			}
			_, err := fmt.Fprintf(e.stdout, "wlc %s\ncue %s\n", v, cueV)
			return err
		},
	}
}
