// Command rocm-smi is a stand-in for ROCm's rocm-smi in tests:
// `rocm-smi [--showproductname] [--showdriverversion] --json`, printing
// what the real one prints in JSON mode: per GPU "card<N>" an object with
// "Card Series", "Card Model", "Card Vendor", "Card SKU" and "GFX Version"
// (--showproductname), and "system": {"Driver version": ...}
// (--showdriverversion). Any other flag is refused (exit 2, argparse's
// usage). It exists only where WLC_STUB_AMD_GPUS is a positive number
// (how many GPUs); otherwise it fails as a node without an AMD GPU does.
// WLC_STUB_GPU_NAME (default "AMD Instinct MI355X") and
// WLC_STUB_GPU_DRIVER (default 6.12.12) describe them.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

func main() {
	product, driver, asJSON := false, false, false
	for _, a := range os.Args[1:] {
		switch a {
		case "--showproductname":
			product = true
		case "--showdriverversion":
			driver = true
		case "--json":
			asJSON = true
		default:
			fmt.Fprintf(os.Stderr, "usage: rocm-smi [-h] ...\nrocm-smi: error: unrecognized arguments: %s\n", a)
			os.Exit(2)
		}
	}
	if !asJSON {
		fmt.Fprintln(os.Stderr, "the stub rocm-smi answers --json only")
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Getenv("WLC_STUB_AMD_GPUS"))
	if n <= 0 {
		fmt.Println("ERROR:root:Driver not initialized (amdgpu not found in modules)")
		os.Exit(2)
	}
	out := map[string]map[string]string{}
	if product {
		for i := 0; i < n; i++ {
			out[fmt.Sprintf("card%d", i)] = map[string]string{
				"Card Series": env("WLC_STUB_GPU_NAME", "AMD Instinct MI355X"), "Card Model": "0x75a3",
				"Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "M3550100", "GFX Version": "gfx950"}
		}
	}
	if driver {
		out["system"] = map[string]string{"Driver version": env("WLC_STUB_GPU_DRIVER", "6.12.12")}
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
