package plan

import (
	"testing"

	"github.com/wlcdev/wlc/schema"
)

// Profiles as the bundled workloads/profiles.cue defines them (only the
// fields image resolution reads).
var (
	profB200 = schema.Profile{Name: "B200", Runtime: "k8s", ImageRepo: "vllm/vllm-openai", ECRPullThroughCache: true}
	profH200 = schema.Profile{Name: "H200", Runtime: "docker", ImageRepo: "vllm/vllm-openai", ECRPullThroughCache: true}
	// AMD profiles turn the pull-through cache off (#69).
	profMI355X = schema.Profile{Name: "MI355X", Runtime: "k8s", ImageRepo: "vllm/vllm-openai-rocm", ECRPullThroughCache: false}
	// A hypothetical AMD k8s profile that keeps the cache on: the rewrite
	// depends on the profile switch, not on the platform.
	profROCmECR = schema.Profile{Name: "ROCM_ECR", Runtime: "k8s", ImageRepo: "vllm/vllm-openai-rocm", ECRPullThroughCache: true}
	profXPU     = schema.Profile{Name: "XPU", Runtime: "docker", ImageRepo: "vllm/vllm-openai-xpu"}
	profSlurm   = schema.Profile{Name: "GB300", Runtime: "slurm", ImageRepo: "vllm/vllm-openai", ECRPullThroughCache: true}
)

const (
	sha20     = "0123456789abcdef0123"
	sha40     = "0123456789abcdef0123456789abcdef01234567"
	ecrCUDA   = "public.ecr.aws/q9t5s3a7/vllm-release-repo:" + sha20
	ecrCached = "936637512419.dkr.ecr.us-west-2.amazonaws.com/vllm-ci-pull-through-cache/q9t5s3a7/vllm-release-repo:" + sha20
	rocmImage = "rocm/vllm-dev:nightly-abcdef1"
	wlImage   = "vllm/vllm-openai:v0.11.0"
)

// TestResolveImagePrecedence walks every row of perf-eval.md §3.5 (main-line
// #69/#70 plus the per-platform pins of #63) on a CUDA and a ROCm profile.
func TestResolveImagePrecedence(t *testing.T) {
	type want struct {
		ref, pull, commit, source, skip string
	}
	for _, tc := range []struct {
		name     string
		prof     schema.Profile
		platform string
		image    string // workload image
		pin      bool
		ov       Overrides
		want     want
	}{
		// Rule 1: pin_image with an image wins over every override.
		{name: "pin beats VLLM_IMAGE and VLLM_COMMIT", prof: profB200, platform: "cuda", image: wlImage, pin: true,
			ov:   Overrides{VLLMImage: ecrCUDA, VLLMCommit: sha40},
			want: want{ref: wlImage, pull: wlImage, source: "pin_image"}},
		{name: "pin beats VLLM_IMAGE_CUDA", prof: profB200, platform: "cuda", image: wlImage, pin: true,
			ov:   Overrides{VLLMImageCUDA: ecrCUDA},
			want: want{ref: wlImage, pull: wlImage, source: "pin_image"}},
		{name: "pin beats the skip of a build pinning only CUDA", prof: profMI355X, platform: "rocm", image: rocmImage, pin: true,
			ov:   Overrides{VLLMImageCUDA: ecrCUDA},
			want: want{ref: rocmImage, pull: rocmImage, commit: "abcdef1", source: "pin_image"}},
		{name: "pin without an image is ignored", prof: profB200, platform: "cuda", pin: true,
			ov:   Overrides{VLLMImage: ecrCUDA, VLLMCommit: sha40},
			want: want{ref: ecrCUDA, pull: ecrCached, commit: sha40, source: "VLLM_IMAGE"}},

		// #63: VLLM_IMAGE_<PLATFORM> comes before VLLM_IMAGE.
		{name: "VLLM_IMAGE_CUDA beats VLLM_IMAGE", prof: profB200, platform: "cuda",
			ov:   Overrides{VLLMImage: "vllm/vllm-openai:other", VLLMImageCUDA: ecrCUDA},
			want: want{ref: ecrCUDA, pull: ecrCached, commit: sha20, source: "VLLM_IMAGE_CUDA"}},
		{name: "VLLM_IMAGE_CUDA commit from VLLM_COMMIT", prof: profB200, platform: "cuda",
			ov:   Overrides{VLLMImageCUDA: ecrCUDA, VLLMCommit: sha40},
			want: want{ref: ecrCUDA, pull: ecrCached, commit: sha40, source: "VLLM_IMAGE_CUDA"}},
		{name: "VLLM_IMAGE_ROCM on ROCm", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImageROCm: rocmImage, VLLMImageCUDA: ecrCUDA},
			want: want{ref: rocmImage, pull: rocmImage, commit: "abcdef1", source: "VLLM_IMAGE_ROCM"}},
		{name: "VLLM_IMAGE_XPU on XPU", prof: profXPU, platform: "xpu",
			ov:   Overrides{VLLMImageXPU: "vllm/vllm-openai-xpu:nightly-1234567"},
			want: want{ref: "vllm/vllm-openai-xpu:nightly-1234567", pull: "vllm/vllm-openai-xpu:nightly-1234567", commit: "1234567", source: "VLLM_IMAGE_XPU"}},
		// #63: the build pins only other platforms and sets no VLLM_IMAGE:
		// the step is kept but skipped; Ref is what would have run.
		{name: "only CUDA pinned skips ROCm", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImageCUDA: ecrCUDA},
			want: want{ref: "vllm/vllm-openai-rocm:nightly", pull: "vllm/vllm-openai-rocm:nightly", source: "default (vllm/vllm-openai-rocm:nightly)", skip: "no ROCM image: set VLLM_IMAGE_ROCM"}},
		{name: "only ROCm pinned skips CUDA", prof: profB200, platform: "cuda", image: wlImage,
			ov:   Overrides{VLLMImageROCm: rocmImage, VLLMCommit: sha40},
			want: want{ref: wlImage, pull: wlImage, source: "workload image", skip: "no CUDA image: set VLLM_IMAGE_CUDA"}},
		{name: "only CUDA pinned but VLLM_IMAGE set: no skip", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImageCUDA: ecrCUDA, VLLMImage: "rocm/vllm:rocm7-" + sha20},
			want: want{ref: "rocm/vllm:rocm7-" + sha20, pull: "rocm/vllm:rocm7-" + sha20, commit: sha20, source: "VLLM_IMAGE"}},

		// Rule 2: VLLM_IMAGE on CUDA, commit = VLLM_COMMIT or the tag's SHA.
		{name: "VLLM_IMAGE on CUDA with VLLM_COMMIT", prof: profB200, platform: "cuda", image: wlImage,
			ov:   Overrides{VLLMImage: ecrCUDA, VLLMCommit: sha40},
			want: want{ref: ecrCUDA, pull: ecrCached, commit: sha40, source: "VLLM_IMAGE"}},
		{name: "VLLM_IMAGE on CUDA, commit from the tag", prof: profB200, platform: "cuda",
			ov:   Overrides{VLLMImage: ecrCUDA},
			want: want{ref: ecrCUDA, pull: ecrCached, commit: sha20, source: "VLLM_IMAGE"}},
		{name: "VLLM_IMAGE on a docker host: no ECR rewrite", prof: profH200, platform: "cuda",
			ov:   Overrides{VLLMImage: ecrCUDA},
			want: want{ref: ecrCUDA, pull: ecrCUDA, commit: sha20, source: "VLLM_IMAGE"}},
		{name: "VLLM_IMAGE on Slurm: no ECR rewrite", prof: profSlurm, platform: "cuda",
			ov:   Overrides{VLLMImage: ecrCUDA},
			want: want{ref: ecrCUDA, pull: ecrCUDA, commit: sha20, source: "VLLM_IMAGE"}},
		// Rule 2, ROCm rule: a ROCm profile takes VLLM_IMAGE only when the
		// value names rocm (case-insensitive).
		{name: "VLLM_IMAGE naming rocm on ROCm", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImage: "rocm/vllm-dev:nightly-" + sha40[:12]},
			want: want{ref: "rocm/vllm-dev:nightly-" + sha40[:12], pull: "rocm/vllm-dev:nightly-" + sha40[:12], commit: sha40[:12], source: "VLLM_IMAGE"}},
		{name: "VLLM_IMAGE naming ROCm in capitals on ROCm", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImage: "registry.example/ROCm/vllm:latest", VLLMCommit: sha20},
			want: want{ref: "registry.example/ROCm/vllm:latest", pull: "registry.example/ROCm/vllm:latest", commit: sha20, source: "VLLM_IMAGE"}},
		// A CUDA image never runs on ROCm: without VLLM_COMMIT the workload
		// image (else <repo>:nightly); the CUDA tag's SHA must not select a
		// ROCm nightly (the bug #69 fixed).
		{name: "CUDA VLLM_IMAGE on ROCm falls back to the default", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImage: ecrCUDA},
			want: want{ref: "vllm/vllm-openai-rocm:nightly", pull: "vllm/vllm-openai-rocm:nightly", source: "default (vllm/vllm-openai-rocm:nightly)"}},
		{name: "CUDA VLLM_IMAGE on ROCm falls back to the workload image", prof: profMI355X, platform: "rocm", image: rocmImage,
			ov:   Overrides{VLLMImage: ecrCUDA},
			want: want{ref: rocmImage, pull: rocmImage, commit: "abcdef1", source: "workload image"}},
		// ... and with VLLM_COMMIT: this platform's nightly of that commit.
		{name: "CUDA VLLM_IMAGE on ROCm with VLLM_COMMIT", prof: profMI355X, platform: "rocm", image: rocmImage,
			ov:   Overrides{VLLMImage: ecrCUDA, VLLMCommit: sha40},
			want: want{ref: "vllm/vllm-openai-rocm:nightly-" + sha40, pull: "vllm/vllm-openai-rocm:nightly-" + sha40, commit: sha40, source: "VLLM_COMMIT"}},
		{name: "CUDA VLLM_IMAGE on XPU with VLLM_COMMIT", prof: profXPU, platform: "xpu",
			ov:   Overrides{VLLMImage: ecrCUDA, VLLMCommit: sha20},
			want: want{ref: "vllm/vllm-openai-xpu:nightly-" + sha20, pull: "vllm/vllm-openai-xpu:nightly-" + sha20, commit: sha20, source: "VLLM_COMMIT"}},

		// Rule 3: VLLM_COMMIT alone selects <image_repo>:nightly-<commit>,
		// even over the workload's image.
		{name: "VLLM_COMMIT on CUDA", prof: profB200, platform: "cuda", image: wlImage,
			ov:   Overrides{VLLMCommit: sha40},
			want: want{ref: "vllm/vllm-openai:nightly-" + sha40, pull: "vllm/vllm-openai:nightly-" + sha40, commit: sha40, source: "VLLM_COMMIT"}},
		{name: "VLLM_COMMIT on ROCm", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMCommit: sha40},
			want: want{ref: "vllm/vllm-openai-rocm:nightly-" + sha40, pull: "vllm/vllm-openai-rocm:nightly-" + sha40, commit: sha40, source: "VLLM_COMMIT"}},

		// Rule 4: the workload image, else <image_repo>:nightly.
		{name: "workload image", prof: profB200, platform: "cuda", image: "vllm/vllm-openai:nightly-" + sha40,
			want: want{ref: "vllm/vllm-openai:nightly-" + sha40, pull: "vllm/vllm-openai:nightly-" + sha40, commit: sha40, source: "workload image"}},
		{name: "workload ECR image is rewritten on k8s", prof: profB200, platform: "cuda", image: ecrCUDA,
			want: want{ref: ecrCUDA, pull: ecrCached, commit: sha20, source: "workload image"}},
		{name: "default CUDA", prof: profB200, platform: "cuda",
			want: want{ref: "vllm/vllm-openai:nightly", pull: "vllm/vllm-openai:nightly", source: "default (vllm/vllm-openai:nightly)"}},
		{name: "default ROCm", prof: profMI355X, platform: "rocm",
			want: want{ref: "vllm/vllm-openai-rocm:nightly", pull: "vllm/vllm-openai-rocm:nightly", source: "default (vllm/vllm-openai-rocm:nightly)"}},
		{name: "default repo when the profile has none", prof: schema.Profile{Runtime: "docker"}, platform: "cuda",
			want: want{ref: "vllm/vllm-openai:nightly", pull: "vllm/vllm-openai:nightly", source: "default (vllm/vllm-openai:nightly)"}},

		// ECR rewrite (§3.4): only public.ecr.aws, only k8s profiles that keep
		// ecr_pull_through_cache on.
		{name: "ECR off on AMD", prof: profMI355X, platform: "rocm",
			ov:   Overrides{VLLMImage: "public.ecr.aws/rocm/vllm:rocm-" + sha20},
			want: want{ref: "public.ecr.aws/rocm/vllm:rocm-" + sha20, pull: "public.ecr.aws/rocm/vllm:rocm-" + sha20, commit: sha20, source: "VLLM_IMAGE"}},
		{name: "ECR on for a ROCm k8s profile that keeps it", prof: profROCmECR, platform: "rocm",
			ov:   Overrides{VLLMImage: "public.ecr.aws/rocm/vllm:rocm-" + sha20},
			want: want{ref: "public.ecr.aws/rocm/vllm:rocm-" + sha20, pull: "936637512419.dkr.ecr.us-west-2.amazonaws.com/vllm-ci-pull-through-cache/rocm/vllm:rocm-" + sha20, commit: sha20, source: "VLLM_IMAGE"}},
		{name: "ECR rewrite needs the public.ecr.aws/ prefix", prof: profB200, platform: "cuda",
			ov:   Overrides{VLLMImage: "mirror.example/public.ecr.aws/x:" + sha20},
			want: want{ref: "mirror.example/public.ecr.aws/x:" + sha20, pull: "mirror.example/public.ecr.aws/x:" + sha20, commit: sha20, source: "VLLM_IMAGE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := schema.Workload{Name: "w", Image: tc.image, PinImage: tc.pin}
			got := ResolveImage(w, tc.prof, tc.platform, tc.ov)
			g := want{ref: got.Ref, pull: got.Pull, commit: got.Commit, source: got.Source, skip: got.Skip}
			if g != tc.want {
				t.Errorf("ResolveImage:\n got %+v\nwant %+v", g, tc.want)
			}
		})
	}
}

// TestResolveImageUsesHardwarePlatform: Resolve derives the platform from
// the hardware vendor, so the ROCm rule applies to AMD hardware.
func TestResolveImageUsesHardwarePlatform(t *testing.T) {
	prof := profMI355X
	prof.Hardware = "MI355X"
	cat := Catalog{
		Profiles: map[string]schema.Profile{"MI355X": prof},
		Hardware: map[string]schema.Hardware{"MI355X": {Name: "MI355X", Vendor: "amd", Architecture: "gfx950"}},
	}
	w := schema.Workload{Name: "w", Profile: "MI355X", Nodes: 1, GPUsPerNode: 8}
	p, err := Resolve(w, "workloads/w.cue", cat, Overrides{VLLMImage: ecrCUDA})
	if err != nil {
		t.Fatal(err)
	}
	if p.Platform != "rocm" || p.Image.Ref != "vllm/vllm-openai-rocm:nightly" {
		t.Errorf("platform %q image %q; want rocm, vllm/vllm-openai-rocm:nightly", p.Platform, p.Image.Ref)
	}
}

func TestCommitFromImage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"vllm/vllm-openai:nightly-abcdef1", "abcdef1"},               // nightly-<7..40 hex>
		{"vllm/vllm-openai:nightly-" + sha40, sha40},                  //
		{"vllm/vllm-openai:nightly-abcdef", ""},                       // 6 hex: too short for nightly-, too short for any
		{"vllm/vllm-openai:nightly-" + sha40 + "0", ""},               // 41 hex: no rule matches
		{"public.ecr.aws/q9t5s3a7/vllm-release-repo:" + sha20, sha20}, // bare 12-40 hex tag
		{"rocm/vllm:rocm7.0_vllm_" + sha20[:12] + "_20250101", sha20[:12]},
		{"rocm/vllm:rocm7.0_vllm_" + sha20[:11] + "_20250101", ""}, // 11 hex: too short
		{"vllm/vllm-openai:v0.11.0", ""},
		{"vllm/vllm-openai", ""},                                                     // no tag
		{"registry:5000/vllm/vllm-openai", ""},                                       // the port is no tag
		{"vllm/vllm-openai:nightly-abcdef1@sha256:" + sha40 + sha40[:24], "abcdef1"}, // digest stripped
		{"vllm/vllm-openai@sha256:" + sha40 + sha40[:24], ""},                        // digest only
		{"vllm/vllm-openai:" + "0123456789ABCDEF0123", ""},                           // upper-case hex is no SHA
	} {
		if got := CommitFromImage(tc.in); got != tc.want {
			t.Errorf("CommitFromImage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
