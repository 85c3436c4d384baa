// Command nvidia-smi is a stand-in for NVIDIA's nvidia-smi in tests: the
// query form only, `nvidia-smi --query-gpu=FIELD,... --format=csv[,noheader][,nounits]`
// (also `--query-gpu FIELDS`, `--format csv`), answering as the real one
// does: one CSV line per GPU, fields joined by ", ", a header line of the
// field names unless noheader. Fields: name, driver_version, count, index,
// uuid, memory.total, pci.bus_id. An unknown field fails as nvidia-smi's
// does (exit 2); anything but the query form is unsupported (exit 2).
//
// The GPUs: WLC_STUB_GPUS (how many, default 8; 0 fails as a node without
// a GPU does), WLC_STUB_GPU_NAME (default "NVIDIA H100 80GB HBM3"),
// WLC_STUB_GPU_DRIVER (default 550.54.15). WLC_STUB_NO_NVIDIA=1: it is not
// there at all (exit 127, as on an AMD node).
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	if os.Getenv("WLC_STUB_NO_NVIDIA") == "1" {
		fmt.Fprintln(os.Stderr, "nvidia-smi: command not found")
		os.Exit(127)
	}
	var query, format string
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func(name string) string {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			usage("Option " + name + " requires an argument")
			return ""
		}
		switch {
		case a == "--query-gpu" || strings.HasPrefix(a, "--query-gpu="):
			query = val("--query-gpu")
		case a == "--format" || strings.HasPrefix(a, "--format="):
			format = val("--format")
		default:
			usage("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.")
		}
	}
	if query == "" || format == "" {
		usage("the stub answers --query-gpu=... --format=csv only")
	}
	opts := strings.Split(format, ",")
	if opts[0] != "csv" {
		usage("Invalid format: " + format)
	}
	header, units := true, true
	for _, o := range opts[1:] {
		switch o {
		case "noheader":
			header = false
		case "nounits":
			units = false
		default:
			usage("Invalid format option: " + o)
		}
	}
	n := 8
	if v := os.Getenv("WLC_STUB_GPUS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if n <= 0 {
		fmt.Println("No devices were found")
		os.Exit(6)
	}
	name := env("WLC_STUB_GPU_NAME", "NVIDIA H100 80GB HBM3")
	driver := env("WLC_STUB_GPU_DRIVER", "550.54.15")
	fields := strings.Split(query, ",")
	var head []string
	for _, f := range fields {
		h := f
		if f == "memory.total" && units {
			h += " [MiB]"
		}
		head = append(head, h)
	}
	var rows []string
	for i := 0; i < n; i++ {
		var vals []string
		for _, f := range fields {
			switch strings.TrimSpace(f) {
			case "name":
				vals = append(vals, name)
			case "driver_version":
				vals = append(vals, driver)
			case "count":
				vals = append(vals, strconv.Itoa(n))
			case "index":
				vals = append(vals, strconv.Itoa(i))
			case "uuid":
				vals = append(vals, fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i))
			case "memory.total":
				v := "81559"
				if units {
					v += " MiB"
				}
				vals = append(vals, v)
			case "pci.bus_id":
				vals = append(vals, fmt.Sprintf("00000000:%02X:00.0", 0x18+i))
			default:
				fmt.Printf("Field \"%s\" is not a valid field to query.\n\n", f)
				os.Exit(2)
			}
		}
		rows = append(rows, strings.Join(vals, ", "))
	}
	if header {
		fmt.Println(strings.Join(head, ", "))
	}
	for _, r := range rows {
		fmt.Println(r)
	}
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func usage(msg string) {
	fmt.Println(msg)
	os.Exit(2)
}
