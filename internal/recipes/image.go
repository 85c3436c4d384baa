package recipes

import (
	"fmt"
	"strconv"
	"strings"
)

// Image is the container image and vLLM floor a rendering runs with, the
// way the site's Install block and docker run line pick them
// (src/lib/command-synthesis.js computeDockerMeta): the variant's
// exact-GPU docker_image, else the variant's, else the model's (a plain
// string pins NVIDIA only; a brand map picks the GPU's brand; a CUDA map
// cu130, else cu129), else the brand's default image, :nightly when the
// model needs nightly.
type Image struct {
	Ref string
	// From says which field pinned it ("variants.nvfp4.docker_image",
	// "model.docker_image.amd", ...) or "the site's default for <brand>".
	From string
	Pos  Pos
	// MinVLLM is the highest min_vllm_version of the recipe and the
	// variant (the site's install floor); Nightly is nightly_required on
	// either.
	MinVLLM string
	Nightly bool
}

// brandKey is the site's image key for p (computeDockerMeta's brandKey).
func brandKey(p *Profile) string {
	switch {
	case p.Generation == "tpu":
		return "tpu"
	case p.Brand == "AMD":
		return "amd"
	case p.Generation == "cpu" || p.Generation == "xpu" || p.Brand == "Intel":
		return "intel"
	}
	return "nvidia"
}

func (c *composer) image() Image {
	r, p, vk, v := c.r, c.p, c.vk, c.variant
	key := brandKey(p)
	var img Image
	pick := func(n node, path string) bool {
		if !n.exists() {
			return false
		}
		if !n.isStruct() {
			if key == "nvidia" {
				img.Ref, img.From, img.Pos = n.str(), path, n.pos()
				return true
			}
			return false
		}
		cuda := func(m node, path string) bool {
			for _, k := range []string{"cu130", "cu129"} {
				if x := m.get(k); x.exists() {
					img.Ref, img.From, img.Pos = x.str(), path+"."+k, x.pos()
					return true
				}
			}
			return false
		}
		for _, b := range []string{"nvidia", "amd", "tpu", "intel"} {
			if n.get(b).exists() { // brand-keyed
				bv := n.get(key)
				switch {
				case !bv.exists():
					return false
				case !bv.isStruct():
					img.Ref, img.From, img.Pos = bv.str(), path+"."+key, bv.pos()
					return true
				case key == "nvidia":
					return cuda(bv, path+"."+key)
				}
				return false
			}
		}
		return key == "nvidia" && cuda(n, path)
	}
	if x := v.get("hardware_overrides", p.ID, "docker_image"); x.exists() && !x.isStruct() {
		img.Ref, img.From, img.Pos = x.str(), "variants."+vk+".hardware_overrides."+p.ID+".docker_image", x.pos()
	} else if !pick(v.get("docker_image"), "variants."+vk+".docker_image") {
		pick(r.n.get("model", "docker_image"), "model.docker_image")
	}
	modelNightly, _ := r.n.get("model", "nightly_required").boolean()
	varNightly, _ := v.get("nightly_required").boolean()
	img.Nightly = modelNightly || varNightly
	if img.Ref == "" {
		tag := "latest"
		if modelNightly {
			tag = "nightly"
		}
		switch {
		case p.Generation == "xpu":
			img.Ref = "vllm/vllm-openai-xpu:latest"
		case key == "amd":
			img.Ref = "vllm/vllm-openai-rocm:" + tag
		case key == "tpu":
			img.Ref = "vllm/vllm-tpu:" + tag
		case key == "intel" && !modelNightly:
			img.Ref = "vllm/vllm-openai-cpu:latest-x86_64"
		case key == "intel":
			img.Ref = "" // the site has no nightly Intel CPU image
		default:
			img.Ref = "vllm/vllm-openai:" + tag
		}
		img.From = "the site's default for " + key
	}
	img.MinVLLM = r.n.get("model", "min_vllm_version").scalar()
	if vv := v.get("min_vllm_version").scalar(); vv != "" && versionLess(img.MinVLLM, vv) {
		img.MinVLLM = vv
	}
	return img
}

// versionLess compares dotted release numbers; "nightly" is above all.
func versionLess(a, b string) bool {
	if a == b || a == "nightly" {
		return false
	}
	if b == "nightly" || a == "" {
		return true
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// comment is the image as the rendered script states it.
func (i Image) comment() string {
	var b strings.Builder
	if i.Ref != "" {
		fmt.Fprintf(&b, "# image: %s (%s)\n", i.Ref, i.From)
	}
	if i.MinVLLM != "" {
		n := ""
		if i.Nightly {
			n = ", nightly required"
		}
		fmt.Fprintf(&b, "# vLLM >= %s%s\n", i.MinVLLM, n)
	}
	return b.String()
}
