package sglang

// LaunchServer is every option of `python3 -m sglang.launch_server`,
// transcribed from SGLang's generated option reference
// (sgl-project/sglang docs/advanced_features/server_arguments.md at
// 004813e1, the page `--help` is rendered into), one line per option:
// its spellings (the primary one first, derived from SGLang's field
// name as its dataclass does), then its kind (b store_true, v value, i int, f float,
// n list (nargs +), z list (nargs *), o optional value, d deprecated). The short forms --tp and --dp
// are not options of their own: argparse reads them as prefixes of
// --tp-size and --dp-size.
var LaunchServer = newTable("python3 -m sglang.launch_server", launchServerSpec, map[string][]string{
	"--tokenizer-mode":        {"auto", "slow"},
	"--dtype":                 {"auto", "half", "float16", "bfloat16", "float", "float32"},
	"--kv-cache-dtype":        {"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"},
	"--speculative-algorithm": {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"},
	"--moe-a2a-backend":       {"none", "deepep", "mooncake", "mori", "nixl", "ascend_fuseep"},
	"--moe-runner-backend": {"auto", "deep_gemm", "triton", "triton_kernel", "flashinfer_trtllm",
		"flashinfer_trtllm_routed", "flashinfer_cutlass", "flashinfer_mxfp4", "flashinfer_cutedsl", "cutlass"},
	"--disaggregation-mode": {"null", "prefill", "decode"},
})

const launchServerSpec = `
# Model and tokenizer
--model-path --model v
--tokenizer-path v
--tokenizer-mode v
--tokenizer-worker-num i
--skip-tokenizer-init b
--load-format v
--model-loader-extra-config v
--trust-remote-code b
--context-length i
--is-embedding b
--enable-multimodal b
--revision v
--model-impl v
# HTTP server
--host v
--port i
--fastapi-root-path v
--grpc-mode b
--skip-server-warmup b
--warmups v
--nccl-port i
--checkpoint-engine-wait-weights-before-ready b
# Quantization and data type
--dtype v
--quantization v
--quantization-param-path v
--kv-cache-dtype v
--enable-fp32-lm-head b
--modelopt-quant v
--modelopt-checkpoint-restore-path v
--modelopt-checkpoint-save-path v
--modelopt-export-path v
--quantize-and-serve b
--rl-quant-profile v
--enable-quant-communications b
# Memory and scheduling
--mem-fraction-static f
--max-running-requests i
--max-queued-requests i
--max-total-tokens i
--chunked-prefill-size i
--prefill-max-requests i
--enable-dynamic-chunking b
--max-prefill-tokens i
--schedule-policy v
--enable-priority-scheduling b
--abort-on-priority-when-disabled b
--schedule-low-priority-values-first b
--priority-scheduling-preemption-threshold i
--schedule-conservativeness f
--page-size i
--swa-full-tokens-ratio f
--disable-hybrid-swa-memory b
--radix-eviction-policy v
--enable-prefill-delayer b
--prefill-delayer-max-delay-passes i
--prefill-delayer-token-usage-low-watermark f
--prefill-delayer-queue-min-ratio f
--prefill-delayer-max-delay-ms f
--prefill-delayer-forward-passes-buckets n
--prefill-delayer-wait-seconds-buckets n
# Runtime options
--device v
--tp-size --tensor-parallel-size i
--pp-size --pipeline-parallel-size i
--attn-cp-size --attention-context-parallel-size i
--moe-dp-size --moe-data-parallel-size i
--pp-max-micro-batch-size i
--pp-async-batch-depth i
--stream-interval i
--incremental-streaming-output b
--random-seed i
--constrained-json-whitespace-pattern v
--constrained-json-disable-any-whitespace b
--watchdog-timeout f
--soft-watchdog-timeout f
--dist-timeout i
--download-dir v
--model-checksum o
--base-gpu-id i
--gpu-id-step i
--sleep-on-idle b
--custom-sigquit-handler v
# Logging
--log-level v
--log-level-http v
--log-requests b
--log-requests-level i
--log-requests-format v
--log-requests-target n
--uvicorn-access-log-exclude-prefixes n
--crash-dump-folder v
--show-time-cost b
--enable-metrics b
--enable-mfu-metrics b
--enable-metrics-for-all-schedulers b
--tokenizer-metrics-custom-labels-header v
--tokenizer-metrics-allowed-custom-labels n
--bucket-time-to-first-token n
--bucket-inter-token-latency n
--bucket-e2e-request-latency n
--collect-tokens-histogram b
--prompt-tokens-buckets n
--generation-tokens-buckets n
--gc-warning-threshold-secs f
--decode-log-interval i
--enable-request-time-stats-logging b
--kv-events-config v
--enable-trace b
--otlp-traces-endpoint v
--export-metrics-to-file b
--export-metrics-to-file-dir v
# API related
--api-key v
--admin-api-key v
--served-model-name v
--weight-version v
--chat-template v
--hf-chat-template-name v
--completion-template v
--file-storage-path v
--enable-cache-report b
--reasoning-parser v
--tool-call-parser v
--tool-server v
--sampling-defaults v
# Data parallelism
--dp-size --data-parallel-size i
--load-balance-method v
# Multi-node distributed serving
--dist-init-addr --nccl-init-addr v
--nnodes i
--node-rank i
# Model override args
--json-model-override-args v
--preferred-sampling-params v
# LoRA
--enable-lora b
--enable-lora-overlap-loading b
--max-lora-rank i
--lora-target-modules n
--lora-paths n
--max-loras-per-batch i
--max-loaded-loras i
--lora-eviction-policy v
--lora-backend v
--max-lora-chunk-size i
--lora-drain-wait-threshold f
# Kernel backends
--attention-backend v
--prefill-attention-backend v
--decode-attention-backend v
--sampling-backend v
--grammar-backend v
--mm-attention-backend v
--dsa-prefill-backend --nsa-prefill-backend v
--dsa-decode-backend --nsa-decode-backend v
--fp8-gemm-backend v
--fp4-gemm-backend v
--disable-flashinfer-autotune b
# Speculative decoding
--speculative-algorithm v
--speculative-draft-model-path --speculative-draft-model v
--speculative-draft-model-revision v
--speculative-draft-load-format v
--speculative-num-steps i
--speculative-eagle-topk i
--speculative-num-draft-tokens i
--speculative-accept-threshold-single f
--speculative-accept-threshold-acc f
--speculative-token-map v
--speculative-attention-mode v
--speculative-draft-attention-backend v
--speculative-moe-runner-backend v
--speculative-moe-a2a-backend v
--speculative-draft-model-quantization v
--speculative-ngram-min-bfs-breadth i
--speculative-ngram-max-bfs-breadth i
--speculative-ngram-match-type v
--speculative-ngram-max-trie-depth i
--speculative-ngram-capacity i
--enable-multi-layer-eagle b
# MoE
--ep-size --expert-parallel-size --ep i
--moe-a2a-backend v
--moe-runner-backend v
--flashinfer-mxfp4-moe-precision v
--enable-flashinfer-allreduce-fusion b
--enable-aiter-allreduce-fusion b
--deepep-mode v
--deepep-dispatcher-output-dtype v
--enable-fused-grouped-gemm-combine b
--ep-num-redundant-experts i
--ep-dispatch-algorithm v
--init-expert-location v
--enable-eplb b
--eplb-algorithm v
--eplb-rebalance-num-iterations i
--eplb-rebalance-layers-per-chunk i
--eplb-min-rebalancing-utilization-threshold f
--expert-distribution-recorder-mode v
--expert-distribution-recorder-buffer-size i
--enable-expert-distribution-metrics b
--deepep-config v
--moe-dense-tp-size i
--elastic-ep-backend v
--enable-elastic-expert-backup b
--mooncake-ib-device v
--enable-deepep-waterfill b
--elastic-ep-rejoin b
# Mamba cache
--max-mamba-cache-size i
--mamba-ssm-dtype v
--mamba-full-memory-ratio f
--mamba-scheduler-strategy v
--mamba-track-interval i
# Hierarchical cache, sparse attention, LMCache
--enable-hierarchical-cache b
--hicache-ratio f
--hicache-size i
--hicache-write-policy v
--hicache-io-backend v
--hicache-mem-layout v
--hicache-storage-backend v
--hicache-storage-prefetch-policy v
--hicache-storage-backend-extra-config v
--hierarchical-sparse-attention-extra-config v
--enable-lmcache b
# Ktransformers, diffusion LLM, offloading, multi-item scoring
--kt-weight-path v
--kt-method v
--kt-cpuinfer i
--kt-threadpool-count i
--kt-num-gpu-experts i
--kt-max-deferred-experts-per-token i
--dllm-algorithm v
--dllm-algorithm-config v
--cpu-offload-gb i
--offload-group-size i
--offload-num-in-group i
--offload-prefetch-step i
--offload-mode v
--multi-item-scoring-delimiter i
# Optimization and debug
--disable-radix-cache b
--cuda-graph-max-bs i
--cuda-graph-bs n
--disable-cuda-graph b
--disable-cuda-graph-padding b
--enable-profile-cuda-graph b
--enable-cudagraph-gc b
--enable-layerwise-nvtx-marker b
--enable-nccl-nvls b
--enable-symm-mem b
--disable-flashinfer-cutlass-moe-fp4-allgather b
--enable-tokenizer-batch-encode b
--disable-tokenizer-batch-decode b
--disable-outlines-disk-cache b
--disable-custom-all-reduce b
--enable-mscclpp b
--enable-torch-symm-mem b
--disable-overlap-schedule b
--enable-mixed-chunk b
--enable-dp-attention b
--enable-dp-lm-head b
--enable-two-batch-overlap b
--enable-single-batch-overlap b
--tbo-token-distribution-threshold f
--enable-torch-compile b
--enable-torch-compile-debug-mode b
--disable-piecewise-cuda-graph b
--enforce-piecewise-cuda-graph b
--piecewise-cuda-graph-tokens v
--piecewise-cuda-graph-compiler v
--torch-compile-max-bs i
--piecewise-cuda-graph-max-tokens i
--torchao-config v
--enable-nan-detection b
--enable-p2p-check b
--triton-attention-reduce-in-fp32 b
--triton-attention-num-kv-splits i
--triton-attention-split-tile-size i
--num-continuous-decode-steps i
--delete-ckpt-after-loading b
--enable-memory-saver b
--enable-weights-cpu-backup b
--enable-draft-weights-cpu-backup b
--allow-auto-truncate b
--enable-custom-logit-processor b
--flashinfer-mla-disable-ragged b
--disable-shared-experts-fusion b
--disable-chunked-prefix-cache b
--disable-fast-image-processor b
--keep-mm-feature-on-device b
--enable-return-hidden-states b
--enable-return-routed-experts b
--scheduler-recv-interval i
--numa-node n
--enable-deterministic-inference b
--rl-on-policy-target v
--enable-attn-tp-input-scattered b
--enable-dsa-prefill-context-parallel --enable-nsa-prefill-context-parallel b
--dsa-prefill-cp-mode --nsa-prefill-cp-mode v
--enable-fused-qk-norm-rope b
--enable-precise-embedding-interpolation b
--enable-dynamic-batch-tokenizer b
--dynamic-batch-tokenizer-batch-size i
--dynamic-batch-tokenizer-batch-timeout f
--debug-tensor-dump-output-folder v
--debug-tensor-dump-layers v
--debug-tensor-dump-input-file v
--debug-tensor-dump-inject v
# PD disaggregation
--disaggregation-mode v
--disaggregation-transfer-backend v
--disaggregation-bootstrap-port i
--disaggregation-ib-device v
--disaggregation-decode-enable-offload-kvcache b
--num-reserved-decode-tokens i
--disaggregation-decode-polling-interval i
--encoder-only b
--language-only b
--encoder-transfer-backend v
--encoder-urls v
# Weight loading
--custom-weight-loader n
--weight-loader-disable-mmap b
--weight-loader-prefetch-checkpoints b
--weight-loader-prefetch-num-threads i
--remote-instance-weight-loader-seed-instance-ip v
--remote-instance-weight-loader-seed-instance-service-port i
--remote-instance-weight-loader-send-weights-group-ports v
--remote-instance-weight-loader-backend v
--remote-instance-weight-loader-start-seed-via-transfer-engine b
# PD multiplexing, config file, multimodal, decryption, hooks, msProbe
--enable-pdmux b
--pdmux-config-path v
--sm-group-num i
--config v
--mm-max-concurrent-calls i
--mm-per-request-timeout i
--enable-broadcast-mm-inputs-process b
--mm-process-config v
--mm-enable-dp-encoder b
--limit-mm-data-per-request v
--enable-mm-global-cache b
--decrypted-config-file v
--decrypted-draft-config-file v
--enable-prefix-mm-cache b
--forward-hooks v
--msprobe-dump-config v
# Deprecated
--enable-ep-moe d
--enable-deepep-moe d
--prefill-round-robin-balance d
--enable-flashinfer-cutlass-moe d
--enable-flashinfer-cutedsl-moe d
--enable-flashinfer-trtllm-moe d
--enable-triton-kernel-moe d
--enable-flashinfer-mxfp4-moe d
--crash-on-nan v
--hybrid-kvcache-ratio f
--load-watch-interval f
--nsa-prefill v
--nsa-decode v
--help -h b
`

// BenchServing is every option of `python3 -m sglang.bench_serving`, from
// its argparse definition (sgl-project/sglang
// python/sglang/bench_serving.py at 0033168f).
var BenchServing = newTable("python3 -m sglang.bench_serving", benchServingSpec, map[string][]string{
	"--backend": {"sglang", "sglang-native", "sglang-oai", "sglang-oai-chat", "vllm", "vllm-chat",
		"lmdeploy", "lmdeploy-chat", "trt", "gserver", "truss"},
	"--dataset-name": {"sharegpt", "random", "random-ids", "generated-shared-prefix", "mmmu", "burstgpt"},
})

const benchServingSpec = `
--backend v
--base-url v
--host v
--port i
--dataset-name v
--dataset-path v
--model v
--tokenizer v
--num-prompts i
--sharegpt-output-len i
--sharegpt-context-len i
--random-input-len i
--random-output-len i
--random-range-ratio f
--request-rate f
--max-concurrency i
--output-file v
--output-details b
--disable-tqdm b
--disable-stream b
--return-logprob b
--seed i
--disable-ignore-eos b
--extra-request-body v
--apply-chat-template b
--profile b
--lora-name z
--prompt-suffix v
--pd-separated b
--flush-cache b
--warmup-requests i
--tokenize-prompt b
--gsp-num-groups i
--gsp-prompts-per-group i
--gsp-system-prompt-len i
--gsp-question-len i
--gsp-output-len i
--help -h b
`
