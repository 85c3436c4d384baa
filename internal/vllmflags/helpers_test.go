package vllmflags

import (
	"os"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o644) }
