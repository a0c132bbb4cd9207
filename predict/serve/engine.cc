#include "predict/serve/engine.h"

#include "model/error.h"

namespace kcast::serve {

namespace {

EngineKind engine_kind(const std::string& name) {
  if (name == "vllm") return EngineKind::vllm;
  if (name == "sglang") return EngineKind::sglang;
  if (name == "trtllm") return EngineKind::trtllm;
  throw InputError("option '--engine': '" + name + "' is not one of vllm, sglang, trtllm");
}

}  // namespace

synth::ServingKernels engine_kernels(const std::string& name) {
  // vLLM's layer ops are its CUDA kernels (Vidur's and Sarathi-Serve's profiles, vLLM's own traces:
  // rms_norm_kernel, act_and_mul_kernel, rotary_embedding_kernel); a vLLM build that leaves them to
  // torch.compile runs Inductor's kernels instead, which a trace of the run shows.
  switch (engine_kind(name)) {
    case EngineKind::sglang: return synth::ServingKernels::sglang;
    case EngineKind::trtllm: return synth::ServingKernels::trtllm;
    case EngineKind::vllm: break;
  }
  return synth::ServingKernels::vllm;
}

EngineConfig engine_defaults(const std::string& name, const GpuSpec& gpu) {
  EngineConfig e;
  e.name = name;
  e.kind = engine_kind(name);
  const bool large = known(gpu.memory_gb) && gpu.memory_gb >= 70;
  if (e.kind == EngineKind::vllm) {
    // vLLM V1 (`vllm serve`, EngineArgs._set_default_args_v1, v0.8-v0.11): GPUs of 70 GiB and more
    // schedule 8192 tokens and 1024 sequences an iteration, smaller ones 2048 and 256; chunked prefill
    // always on; 16-token blocks; --gpu-memory-utilization 0.9; CUDA graphs captured up to 512.
    e.max_batched_tokens = large ? 8192 : 2048;
    e.max_num_seqs = large ? 1024 : 256;
    e.block_size = 16;
    e.gpu_memory_utilization = 0.9;
    e.graph_max_tokens = 512;
  } else if (e.kind == EngineKind::sglang) {
    // SGLang (ServerArgs, v0.4-v0.5): chunked_prefill_size 8192 on GPUs of 80 GB class (4096 below
    // 60 GB, 2048 below 35 GB), max running requests bounded by memory (a cap of 4096 here),
    // mem_fraction_static about 0.88 for one GPU of that class, page size 1, CUDA graphs up to 512.
    e.max_batched_tokens = !known(gpu.memory_gb) || gpu.memory_gb >= 60 ? 8192 : gpu.memory_gb >= 35 ? 4096 : 2048;
    e.max_num_seqs = 4096;
    e.block_size = 1;
    e.gpu_memory_utilization = 0.88;
    e.mixed_batches = false;
    e.graph_max_tokens = 512;
  } else {
    // TensorRT-LLM (LLM API / trtllm-serve BuildConfig and KvCacheConfig, v0.17-v1.0): max_batch_size
    // 2048, max_num_tokens 8192, tokens_per_block 32, free_gpu_memory_fraction 0.9 of what is left
    // after the weights (counted here as a share of the whole), chunked context on, the
    // GUARANTEED_NO_EVICT capacity scheduler; CUDA graphs for generation batches up to 128.
    e.max_batched_tokens = 8192;
    e.max_num_seqs = 2048;
    e.block_size = 32;
    e.gpu_memory_utilization = 0.9;
    e.reserve_whole_request = true;
    e.fraction_of_free = true;
    e.graph_max_tokens = 128;
  }
  return e;
}

}  // namespace kcast::serve
