// The MLP of a layer and mixtures of experts.
//  - GPT-2's gelu_new is 8 Python-level elementwise kernels (the graphs show mul, pow, mul, add,
//    mul, tanh, add, mul); BERT's GELU is one erf kernel; OPT uses ReLU; LLaMA SwiGLU = silu + mul.
//  - Mixtures of experts: the router (softmax top-k, sigmoid with group limits as DeepSeek-V3),
//    the experts as HF's eager loop runs them (a GEMM per hit expert, or every expert on every
//    token where the code does), or fused MoE kernels under serving / FP8 / FP4, shared experts,
//    and the expert-parallel all-to-all around them (parallel.cc).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/transformer/transformer_synth.h"

namespace kcast::synth::transformer {

TransformerSynth::ActivationOps TransformerSynth::gate_activation() const {
  switch (c_.act) {
    case Activation::gelu: return {"aten::gelu", "aten::gelu_backward", 8};
    case Activation::gelu_tanh: return {"aten::gelu (tanh)", "aten::gelu_backward (tanh)", 8};
    case Activation::relu: return {"aten::relu", "aten::threshold_backward", 1};
    default: return {"aten::silu", "aten::silu_backward", 4};  // gelu_new is refused for gated MLPs
  }
}

// SwiGLU: down(silu(gate(x)) * up(x)) over `rows` tokens, `n` such MLPs (experts) in a row.
void TransformerSynth::swiglu(Section& s, const std::string& name, double rows, int64_t F, bool bias, double n,
                              bool register_params, unsigned act_module) {
  const double e = rows * double(F);
  if (c_.fused_gate_up) {  // Phi-3: one gate_up_proj, chunked by views
    linear(s, name + ".gate_up_proj", rows, d_, 2 * F, bias, n, register_params);
  } else {
    s.backward_only({times(accumulate(name + ".input", rows * double(d_)), n)});  // x feeds gate and up
    linear(s, name + ".gate_proj|up_proj", rows, d_, F, bias, 2 * n, register_params);
  }
  const size_t act = s.fwd.size();
  gate(s, name, e, n);
  recompute_from(s, act, act_module);
  linear(s, name + ".down_proj", rows, F, d_, bias, n, register_params);
}

void TransformerSynth::recompute_from(Section& s, size_t first, unsigned module) const {
  if (!train_ || !o_.recomputes(module)) return;
  for (size_t i = first; i < s.fwd.size(); ++i)
    if (std::find(s.recompute_ops.begin(), s.recompute_ops.end(), i) == s.recompute_ops.end())
      s.recompute_ops.push_back(i);
}

// act(gate) * up over `e` elements, `n` times. The activation is SiLU (SwiGLU) or Gemma's tanh-GELU
// (GeGLU), one kernel either way; GPT-OSS's clamped form is seven: gate.clamp(max=7),
// up.clamp(-7, 7), gate * 1.702, sigmoid, gate * that, up + 1, their product.
void TransformerSynth::gate(Section& s, const std::string& name, double e, double n) {
  if (c_.clamped_swiglu && !serving_) {
    for (const auto& [op, flops] : {std::pair<const char*, double>{"aten::clamp (gate)", 1}, {"aten::clamp (up)", 2},
                                    {"aten::mul (alpha)", 1}, {"aten::sigmoid", 4}})
      s.op(times(pointwise(name + ".act " + op, dt_, e, 2, flops), n),
           {times(pointwise(name + ".act " + std::string(op) + " (backward)", dt_, e, 3, flops), n)});
    s.op(times(pointwise(name + ".act aten::mul (glu)", dt_, e, 3, 1), n),
         {times(pointwise(name + ".act aten::mul (glu backward)", dt_, e, 3, 1), 2 * n)});
    s.op(times(pointwise(name + ".act aten::add (up + 1)", dt_, e, 2, 1), n));
    s.op(times(pointwise(name + ".gate aten::mul", dt_, e, 3, 1), n),
         {times(pointwise(name + ".gate aten::mul (backward)", dt_, e, 3, 1), 2 * n)});
    return;
  }
  if (fused_ && !c_.clamped_swiglu) {
    // One kernel each way (Megatron's bias_swiglu fusion / TE's swiglu; torch.compile's): forward
    // reads gate and up, writes act(gate) * up; backward reads them and the output gradient, writes
    // both input gradients.
    const char* kernel = megatron_ ? ".act te::swiglu" : ".act triton_fused_swiglu";
    s.op(times(work(name + kernel + " (forward)", EW, dt_, 5 * e, 3 * e * e_), n),
         {times(work(name + kernel + " (backward)", EW, dt_, 8 * e, 5 * e * e_), n)});
    return;
  }
  if (serving_) {
    // One kernel: act(gate) * up from the merged gate|up output (vLLM's silu_and_mul / gelu_tanh_and_mul).
    const char* fused =
        c_.clamped_swiglu            ? engine_kernel(" vllm::swigluoai_and_mul", " sgl_kernel::swiglu_oai",
                                                     " trtllm::swiglu_oai")
        : c_.act == Activation::silu ? engine_kernel(" vllm::silu_and_mul", " sgl_kernel::silu_and_mul",
                                                     " trtllm::silu_and_mul")
                                     : engine_kernel(" vllm::gelu_and_mul", " sgl_kernel::gelu_tanh_and_mul",
                                                     " trtllm::gelu_and_mul");
    s.op(times(work(name + ".act" + fused, EW, dt_, 5 * e, 3 * e * e_), n));
    return;
  }
  const auto [op, bwd_op, flops] = gate_activation();
  s.op(times(pointwise(name + ".act " + op, dt_, e, 2, flops), n),
       {times(pointwise(name + ".act " + bwd_op, dt_, e, 3, flops), n)});
  s.op(times(pointwise(name + ".gate aten::mul", dt_, e, 3, 1), n),
       {times(pointwise(name + ".gate aten::mul (backward)", dt_, e, 3, 1), 2 * n)});
}

double TransformerSynth::expert_capacity() const {
  if (!(o_.moe_capacity_factor > 0)) return 0;
  // moe_utils.get_capacity: ceil(tokens x top-k / experts x factor).
  return std::ceil(T_ * double(c_.experts_per_token) / double(c_.experts) * o_.moe_capacity_factor);
}

double TransformerSynth::routed_rows() const {
  const double Tk = T_ * double(c_.experts_per_token), cap = expert_capacity();
  if (cap == 0) return Tk;
  // Balanced routing gives each expert Tk / experts rows: a capacity below that drops the rest; padding
  // fills every expert up to it.
  const double E = double(c_.experts);
  return o_.moe_pad_to_capacity ? cap * E : std::min(Tk, cap * E);
}

double TransformerSynth::busiest_rows() const {
  if (o_.moe_pad_to_capacity) return routed_rows();  // every expert runs its capacity, however routed
  // The busiest GPU's experts take imbalance x their share, each at most its capacity from every GPU.
  const double rows = o_.moe_load_imbalance * T_ * double(c_.experts_per_token), cap = expert_capacity();
  return cap == 0 ? rows : std::min(rows, cap * double(c_.experts));
}

// HF's MixtralSparseMoeBlock / Qwen2MoeSparseMoeBlock in eager: the router GEMM, softmax (fp32)
// and top-k, then a Python loop over the experts some token chose: torch.where on the one-hot
// mask (nonzero, whose count reaches the host), a gather of the expert's tokens, the SwiGLU
// expert, the routing-weight multiply and index_add_ into the output. Routing is taken as
// balanced and uniform: T tokens choosing k of E experts hit E(1 - (1 - k/E)^T) of them in
// expectation, each with Tk / hit tokens. Tensor parallelism splits every expert's MLP as it
// splits a dense one. Expert parallelism over ep GPUs (Megatron-LM / DeepSpeed-MoE): each holds
// E / ep experts, an all-to-all sends every chosen token to its expert's GPU and another brings
// the results back (in backward, their gradients); with balanced routing each GPU receives the
// Tk picks it sends, spread over its share of the experts the ep GPUs' tokens hit.
//
// Folded over the tensor-parallel ranks (SynthOptions::folded_experts: Megatron-Core's MoE parallel
// folding with expert tensor parallelism 1), each GPU routes its own sequence-parallel shard of the
// tokens (Tn) to whole experts, and the block needs no tensor-parallel gather or scatter around it;
// the shared experts run whole on that shard too (the same FLOPs as tp slices of all tokens).
void TransformerSynth::moe(Section& s) {
  const bool folded = o_.folded_experts();
  // The experts see this GPU's tokens: the sequence-parallel shard when folded.
  struct TokensOf {
    double& t;
    double saved;
    ~TokensOf() { t = saved; }
  } tokens{T_, T_};
  T_ = moe_tokens();
  const int64_t etp = expert_tp();
  const double E = double(c_.experts), k = double(c_.experts_per_token);
  const double ep = double(o_.ep);
  // Padded to capacity every local expert runs, on its capacity from each GPU of the group.
  const double hit = o_.moe_pad_to_capacity ? E / ep
                                            : std::max(1.0, std::round(E * (1 - std::pow(1 - k / E, ep * T_)) / ep));
  // Tokens per expert on the GPU the exchange waits for: received = sent under balanced routing, the
  // imbalance's share on the busiest one (SynthOptions::moe_load_imbalance).
  const double Te = std::max(1.0, std::round(busiest_rows() / hit));
  const int64_t Fe = c_.expert_ffn / etp;
  if (!folded) tp_all_reduce(s, "mlp.input", false);
  // x feeds the router and the experts' gathers (and the shared expert and its gate).
  const bool shared = c_.shared_expert_ffn > 0;
  s.backward_only({accumulate("moe.input", T_ * d_, shared ? (c_.shared_expert_gated ? 3 : 2) : 1)});
  linear(s, "moe.gate", T_, d_, c_.experts, c_.gate_bias, 1, true, false);
  if (quant_ || serving_) fused_experts(s, hit, Te, Fe);
  else if (megatron_ && train_) megatron_experts(s, hit, Te, Fe);
  else if (all_experts_eagerly()) all_experts(s, Fe);
  else eager_experts(s, hit, Te, Fe);
  auto& expert_params = o_.ep > 1 ? s.expert_params : s.params;
  for (int64_t i = 0; i < c_.experts / o_.ep; ++i) {  // every local expert's, chosen or not
    for (int j = 0; j < 3; ++j) expert_params.push_back(d_ * Fe);
    if (c_.expert_bias) expert_params.insert(expert_params.end(), {2 * Fe, d_});
  }
  all_to_all(s, "moe.combine", false);
  if (megatron_ && train_ && !quant_ && !serving_) {
    // Transformer Engine's unpermutation: each token's k results weighted by their probabilities and
    // summed (backward: the output gradient scattered to the k rows, and the probabilities' gradient).
    const double Tk = routed_rows(), x = T_ * double(d_) * e_, xk = Tk * double(d_) * e_;
    s.op(work("moe.unpermute te::moe_unpermute", KernelClass::embedding, dt_, 2 * Tk * double(d_), xk + x + 12 * Tk),
         {work("moe.unpermute te::moe_unpermute (backward)", KernelClass::embedding, dt_, 2 * Tk * double(d_),
               2 * xk + x + 12 * Tk)});
  }
  const size_t shared_first = s.fwd.size();
  if (shared && !c_.shared_expert_gated) {
    // DeepSeek: out += shared_experts(x), on every token.
    swiglu(s, "moe.shared_experts", T_, c_.shared_expert_ffn / etp, false);
    recompute_from(s, shared_first, kRecomputeSharedExperts);
    s.op(pointwise("moe.shared_experts aten::add", dt_, T_ * d_, 3, 1));
  } else if (shared) {
    // Qwen2-MoE: out += sigmoid(shared_expert_gate(x)) * shared_expert(x), on every token.
    swiglu(s, "moe.shared_expert", T_, c_.shared_expert_ffn / etp, false);
    linear(s, "moe.shared_expert_gate", T_, d_, 1, false, 1, true, false);
    s.op(pointwise("moe.shared_expert_gate aten::sigmoid", dt_, T_, 2, 4),
         {pointwise("moe.shared_expert_gate aten::sigmoid_backward", dt_, T_, 3, 4)});
    recompute_from(s, shared_first, kRecomputeSharedExperts);
    s.op(work("moe.shared_expert aten::mul|add", EW, dt_, 2 * T_ * d_, (4 * T_ * d_ + T_) * e_),
         {work("moe.shared_expert aten::mul (backward)", EW, dt_, T_ * d_, (3 * T_ * d_ + T_) * e_),
          work("moe.shared_expert aten::mul|sum (gate grad)", KernelClass::reduction, dt_, 2 * T_ * d_,
               (2 * T_ * d_ + T_) * e_)});
  }
  if (!folded) tp_all_reduce(s, "mlp.down_proj", true);
}

bool TransformerSynth::all_experts_eagerly() const {
  using X = TransformerConfig::EagerExperts;
  return c_.eager_experts == X::all || (c_.eager_experts == X::all_in_inference && !train_);
}

// Routing that takes the top k of the logits first (Llama 4, GPT-OSS): their values through a
// sigmoid (Llama 4: scattered into a -inf matrix, sigmoid over it, fp32, so the unchosen score 0)
// or a softmax over the k (GPT-OSS: then scattered into zeros).
void TransformerSynth::topk_first_routing(Section& s) {
  const double E = double(c_.experts), TE = T_ * E, Tk = T_ * double(c_.experts_per_token);
  const DType f32 = DType::fp32;
  s.op(work("moe.router aten::topk", KernelClass::reduction, dt_, TE, TE * e_ + 12 * Tk),
       {work("moe.router aten::topk (backward: zero_|scatter)", EW, dt_, Tk, TE * e_ + 12 * Tk)});
  if (c_.router == TransformerConfig::Router::topk_softmax) {
    s.op(over_rows(work("moe.router aten::_softmax (top-k)", KernelClass::softmax, dt_, 5 * Tk, 2 * Tk * e_), T_,
                   double(c_.experts_per_token)),
         {over_rows(work("moe.router aten::_softmax_backward_data", KernelClass::softmax, dt_, 4 * Tk, 3 * Tk * e_),
                    T_, double(c_.experts_per_token))});
    s.op(work("moe.router aten::zeros_like|scatter_", EW, dt_, 0, 2 * TE * e_ + 12 * Tk),
         {work("moe.router aten::gather (scatter_ backward)", EW, dt_, 0, TE * e_ + 12 * Tk)});
    return;
  }
  s.op(work("moe.router aten::full_like|scatter_ (-inf)", EW, dt_, 0, 2 * TE * e_ + 12 * Tk),
       {work("moe.router aten::gather (scatter_ backward)", EW, dt_, 0, TE * e_ + 12 * Tk)});
  s.op(work("moe.router aten::_to_copy (fp32)", EW, dt_, 0, TE * (e_ + 4)),
       {work("moe.router aten::_to_copy (backward)", EW, dt_, 0, TE * (e_ + 4))});
  s.op(pointwise("moe.router aten::sigmoid", f32, TE, 2, 4),
       {pointwise("moe.router aten::sigmoid_backward", f32, TE, 3, 4)});
  s.op(work("moe.router aten::_to_copy", EW, f32, 0, TE * (e_ + 4)),
       {work("moe.router aten::_to_copy (backward)", EW, f32, 0, TE * (e_ + 4))});
}

// The HF loop (moe() above): routing in eager ops, then per chosen expert its sync, gather,
// SwiGLU, weighting and scatter-add; the dispatch all-to-all before the loop.
void TransformerSynth::eager_experts(Section& s, double hit, double Te, int64_t Fe) {
  const double E = double(c_.experts), k = double(c_.experts_per_token), TE = T_ * E, Tk = T_ * k;
  const DType f32 = DType::fp32;
  using R = TransformerConfig::Router;
  if (c_.router == R::sigmoid) {
    sigmoid_routing(s);
  } else if (c_.router == R::topk_sigmoid || c_.router == R::topk_softmax) {
    topk_first_routing(s);
  } else {
    s.op(over_rows(work("moe.router aten::_softmax (fp32)", KernelClass::softmax, f32, 5 * TE, TE * (e_ + 4)), T_, E),
         {over_rows(work("moe.router aten::_softmax_backward_data", KernelClass::softmax, f32, 4 * TE, 12 * TE), T_, E)});
    if (c_.expert_groups > 1) group_limit(s);
    s.op(work("moe.router aten::topk", KernelClass::reduction, f32, TE, 4 * TE + 12 * Tk),
         {work("moe.router aten::topk (backward: zero_|scatter)", EW, f32, Tk, 4 * TE + 12 * Tk)});
  }
  if (c_.norm_topk)
    s.op(times(work("moe.router aten::sum|div (renormalize)", EW, f32, Tk, 12 * Tk), 2),
         {times(work("moe.router aten::sum|div (backward)", EW, f32, Tk, 12 * Tk), 2)});
  if (e_ != 4)
    s.op(work("moe.router aten::_to_copy", EW, dt_, 0, Tk * (4 + e_)),
         {work("moe.router aten::_to_copy (backward)", EW, dt_, 0, Tk * (4 + e_))});
  s.op(work("moe.output aten::zeros", EW, dt_, 0, T_ * d_ * e_));
  s.op(work("moe.mask aten::one_hot|permute", EW, f32, 0, 8 * Tk + 8 * TE * k));
  if (train_) s.backward_only({work("moe.input aten::zeros (gather grad)", EW, dt_, 0, T_ * d_ * e_)});
  all_to_all(s, "moe.dispatch", true);
  const double xe = Te * double(d_);  // one expert's tokens
  s.op(times(work("moe.experts aten::nonzero (torch.where)", KernelClass::reduction, f32, Tk, 8 * Tk + 16 * Te), hit));
  s.op(times(work("moe.experts aten::nonzero (count to host)", KernelClass::memcpy, f32, 0, 8), hit));
  s.op(times(work("moe.experts aten::index (tokens)", KernelClass::embedding, dt_, 0, 8 * Te + 2 * xe * e_), hit),
       {times(work("moe.experts aten::index_put_ (tokens backward)", KernelClass::embedding, dt_, xe,
                   8 * Te + 3 * xe * e_),
              hit)});
  swiglu(s, "moe.experts", Te, Fe, c_.expert_bias, hit, false);
  s.op(times(work("moe.experts aten::index (routing weights)", KernelClass::embedding, dt_, 0, Te * (16 + 2 * e_)), hit));
  s.op(times(work("moe.experts aten::mul (routing weight)", EW, dt_, xe, (2 * xe + Te) * e_), hit),
       {times(work("moe.experts aten::mul (routing weight backward)", EW, dt_, xe, (2 * xe + Te) * e_), hit),
        times(work("moe.experts aten::mul|sum (routing weight grad)", KernelClass::reduction, dt_, 2 * xe,
                   (2 * xe + Te) * e_),
              hit)});
  s.op(times(work("moe.experts aten::index_add_", KernelClass::embedding, dt_, xe, 8 * Te + 3 * xe * e_), hit),
       {times(work("moe.experts aten::index_select (index_add_ backward)", KernelClass::embedding, dt_, 0,
                   8 * Te + 2 * xe * e_),
              hit)});
}

// HF's eager experts that run every expert on every token (Llama4TextExperts; GptOssExperts at
// inference): the router (topk_first_routing: every unchosen expert scores 0), the tokens repeated
// once per expert, two batched GEMMs over all experts (GPT-OSS adds each expert's biases), the
// results weighted by the scores (Llama 4 scales the repeated input instead) and summed over the
// experts. A shared expert follows in moe().
void TransformerSynth::all_experts(Section& s, int64_t Fe) {
  const double E = double(c_.experts), TE = T_ * E;
  const double x = TE * double(d_), f = TE * double(Fe);  // repeated tokens; their MLP width
  const bool llama4 = c_.router == TransformerConfig::Router::topk_sigmoid;
  topk_first_routing(s);
  s.op(pointwise("moe.router aten::clone (transpose, reshape)", dt_, TE, 2, 0),
       {pointwise("moe.router aten::clone (backward)", dt_, TE, 2, 0)});
  s.op(work("moe.experts aten::repeat", EW, dt_, 0, (T_ * double(d_) + x) * e_),
       {work("moe.experts aten::sum (repeat backward)", KernelClass::reduction, dt_, x, (x + T_ * double(d_)) * e_)});
  auto weigh = [&] {
    s.op(work("moe.experts aten::mul (scores)", EW, dt_, x, (2 * x + TE) * e_),
         {work("moe.experts aten::mul (scores backward)", EW, dt_, x, (2 * x + TE) * e_),
          work("moe.experts aten::mul|sum (scores grad)", KernelClass::reduction, dt_, 2 * x, (2 * x + TE) * e_)});
  };
  auto bias = [&](const std::string& name, double elems) {
    if (c_.expert_bias) s.op(pointwise(name + " aten::add (bias)", dt_, elems, 3, 1));
  };
  if (llama4) weigh();
  const int64_t batch = c_.experts, rows = int64_t(T_);
  s.op(gemm("moe.experts aten::bmm (gate_up_proj)", dt_, batch, rows, 2 * Fe, d_),
       {gemm("moe.experts aten::bmm (gate_up_proj dgrad)", dt_, batch, rows, d_, 2 * Fe),
        gemm("moe.experts aten::bmm (gate_up_proj wgrad)", dt_, batch, d_, 2 * Fe, rows)});
  bias("moe.experts.gate_up_proj", 2 * f);
  gate(s, "moe.experts", f, 1);
  s.op(gemm("moe.experts aten::bmm (down_proj)", dt_, batch, rows, d_, Fe),
       {gemm("moe.experts aten::bmm (down_proj dgrad)", dt_, batch, rows, Fe, d_),
        gemm("moe.experts aten::bmm (down_proj wgrad)", dt_, batch, Fe, d_, rows)});
  bias("moe.experts.down_proj", x);
  if (!llama4) weigh();
  s.op(work("moe.experts aten::sum (over experts)", KernelClass::reduction, dt_, x, (x + T_ * double(d_)) * e_),
       {work("moe.experts aten::expand|clone (sum backward)", EW, dt_, 0, (x + T_ * double(d_)) * e_)});
}

// DeepSeek-V3's router (HF DeepseekV3TopkRouter): sigmoid scores, the correction bias added for the
// choice, the group limit, top-k on the masked scores, and the chosen scores gathered (the
// weights; their renormalization and the routed scaling factor follow).
void TransformerSynth::sigmoid_routing(Section& s) {
  const double TE = T_ * double(c_.experts), Tk = T_ * double(c_.experts_per_token);
  const DType f32 = DType::fp32;
  s.op(pointwise("moe.router aten::sigmoid", f32, TE, 2, 4), {pointwise("moe.router aten::sigmoid_backward", f32, TE, 3, 4)});
  if (c_.router_bias) s.op(pointwise("moe.router aten::add (correction bias)", f32, TE, 2, 1));
  if (c_.expert_groups > 1) group_limit(s);
  s.op(work("moe.router aten::topk", KernelClass::reduction, f32, TE, 4 * TE + 12 * Tk));
  s.op(work("moe.router aten::gather (weights)", KernelClass::embedding, f32, 0, 4 * TE + 12 * Tk),
       {work("moe.router aten::scatter (gather backward)", EW, f32, Tk, 4 * TE + 12 * Tk)});
  s.op(work("moe.router aten::mul (routed scaling)", EW, f32, Tk, 8 * Tk),
       {work("moe.router aten::mul (routed scaling backward)", EW, f32, Tk, 8 * Tk)});
}

// Group-limited top-k (DeepSeek): each group's score (its best two), the best topk_groups groups,
// their mask scattered and expanded, the other experts' scores zeroed. No gradient flows here.
void TransformerSynth::group_limit(Section& s) {
  const double TE = T_ * double(c_.experts), TG = T_ * double(c_.expert_groups);
  const DType f32 = DType::fp32;
  s.op(work("moe.router aten::topk|sum (group scores)", KernelClass::reduction, f32, TE, 4 * TE + 12 * TG));
  s.op(work("moe.router aten::topk (groups)", KernelClass::reduction, f32, TG, 4 * TG + 8 * T_ * double(c_.topk_groups)));
  s.op(work("moe.router aten::zeros|scatter_ (group mask)", EW, f32, 0, 8 * TG));
  s.op(work("moe.router aten::expand|reshape|masked_fill", EW, f32, TE, 9 * TE));
}

// Quantized serving (`--dtype fp8`: vLLM / sglang fused_moe, Triton; `fp4`: vLLM's CUTLASS FP4 MoE):
// one fused top-k softmax, the tokens sorted by expert (moe_align_block_size), the BF16 input
// quantized, one grouped narrow GEMM for gate|up over every chosen expert (a batched GEMM of `hit`
// problems of Te tokens), silu_and_mul, the intermediate quantized, one grouped GEMM for down, and
// the sum over each token's k experts.
// Serving in BF16 (no quant_): the same without the quantize passes, on vLLM's Triton fused_moe_kernel.
void TransformerSynth::fused_experts(Section& s, double hit, double Te, int64_t Fe) {
  const double E = double(c_.experts), Tk = T_ * double(c_.experts_per_token);
  if (quant_) quant_params_ += s.weights * 3 * double(c_.experts / o_.ep) * double(d_) * double(Fe);  // narrow
  const DType f32 = DType::fp32, bf = DType::bf16;
  if (c_.router == TransformerConfig::Router::topk_sigmoid)  // Llama 4: top-k, then a sigmoid of the chosen logits
    s.op(work("moe.router fused_topk (sigmoid)", KernelClass::reduction, f32, 2 * T_ * E, T_ * E * e_ + 8 * Tk));
  else if (c_.router == TransformerConfig::Router::sigmoid || c_.expert_groups > 1)
    s.op(work("moe.router grouped_topk", KernelClass::reduction, f32, 5 * T_ * E, T_ * E * e_ + 8 * Tk));
  else
    s.op(over_rows(work("moe.router topk_softmax", KernelClass::softmax, f32, 5 * T_ * E, T_ * E * e_ + 8 * Tk), T_, E));
  s.op(work("moe.experts moe_align_block_size", KernelClass::reduction, f32, Tk, 16 * Tk));
  all_to_all(s, "moe.dispatch", true);
  const double Ed = Tk * double(d_), Ef = Tk * double(Fe);  // picked tokens' hidden and MLP widths
  const std::string grouped = std::string("moe.experts ") + (quant_ ? quant_->grouped : "fused_moe_kernel");
  const DType wdt = quant_ ? quant_->dtype : dt_;
  if (quant_) s.op(quantize_input(*quant_, "moe.experts", T_, double(d_)));
  s.op(gemm(grouped + " (w13)", wdt, int64_t(hit), int64_t(Te), 2 * Fe, d_));
  // GPT-OSS's clamped SwiGLU is one fused kernel in the serving stacks too (vLLM's swigluoai_and_mul).
  s.op(work(serving_ && c_.clamped_swiglu ? "moe.experts swigluoai_and_mul" : "moe.experts silu_and_mul", EW, bf,
            5 * Ef, 3 * Ef * e_));
  if (quant_) s.op(quantize_input(*quant_, "moe.experts", Tk, double(Fe), " (intermediate)"));
  s.op(gemm(grouped + " (w2)", wdt, int64_t(hit), int64_t(Te), d_, Fe));
  s.op(work("moe.experts moe_sum", EW, bf, Ed, (Ed + T_ * d_) * e_));
}

// Megatron-Core's MoE layer in training (the published recipes' --moe-router-fusion,
// --moe-permute-fusion, --moe-grouped-gemm): one fused router kernel (score function, group limit,
// top-k, scaling; fp32 logits), the tokens permuted by expert in one Transformer Engine kernel, the
// dispatch, a second permutation that sorts the received tokens by local expert, the grouped GEMM
// (Transformer Engine's GroupedLinear: one GEMM per local expert), the gated activation, the local
// sort undone, the combine, and the unpermutation that weights each token's k results by their
// probabilities and sums them. Routing is balanced as the published runs force it.
void TransformerSynth::megatron_experts(Section& s, double hit, double Te, int64_t Fe) {
  const double E = double(c_.experts), picks = T_ * double(c_.experts_per_token);
  // The permuted rows: the tokens' k copies (token dropping: those its capacity keeps, or pads to).
  const double Tk = routed_rows();
  const double x = T_ * double(d_) * e_, xk = Tk * double(d_) * e_;  // the tokens; their k copies
  const double xr = busiest_rows() * double(d_) * e_;                   // the rows the busiest GPU receives
  const DType f32 = DType::fp32;
  s.op(over_rows(work("moe.router te::fused_topk_with_score_function", KernelClass::softmax, f32, 6 * T_ * E,
                      T_ * E * 9 + 12 * picks),
                 T_, E),
       {over_rows(work("moe.router te::fused_topk_with_score_function (backward)", KernelClass::softmax, f32,
                       4 * T_ * E, T_ * E * 8 + 12 * picks),
                  T_, E)});
  // The tokens each local expert receives reach the host before the dispatch: Transformer Engine's
  // grouped GEMM takes the experts' row counts as a host list (GroupedLinear's m_splits), and the
  // all-to-all's split sizes are host integers too (HybridEP / DeepEP read their counts back
  // likewise). The host waits there for the GPU to drain, once per MoE layer's forward. Padded to
  // capacity the counts are known beforehand: no read.
  if (!o_.moe_pad_to_capacity)
    s.op(work(std::string("moe.tokens_per_expert [CUDA memcpy Device-to-Host]") + kToHostTag, KernelClass::memcpy,
              f32, 0, 8 * E));
  s.op(work("moe.permute te::moe_permute", KernelClass::embedding, dt_, 0, x + xk + 8 * Tk),
       {work("moe.permute te::moe_permute (backward)", KernelClass::embedding, dt_, Tk * double(d_), xk + x + 8 * Tk)});
  all_to_all(s, "moe.dispatch", true);
  const bool sort = c_.experts / o_.ep > 1;  // the received tokens grouped by local expert
  if (sort)
    s.op(work("moe.experts te::moe_sort_chunks_by_index", KernelClass::embedding, dt_, 0, 2 * xr),
         {work("moe.experts te::moe_sort_chunks_by_index (backward)", KernelClass::embedding, dt_, 0, 2 * xr)});
  swiglu(s, "moe.experts", Te, Fe, c_.expert_bias, hit, false, kRecomputeMoeAct);
  if (sort)
    s.op(work("moe.experts te::moe_sort_chunks_by_index (restore)", KernelClass::embedding, dt_, 0, 2 * xr),
         {work("moe.experts te::moe_sort_chunks_by_index (restore, backward)", KernelClass::embedding, dt_, 0, 2 * xr)});
  // The combine and the unpermutation follow in moe().
}

void TransformerSynth::mlp(Section& s, bool dense_mlp) {
  if (c_.experts > 0 && !dense_mlp) return moe(s);
  const int64_t F = F_;
  const double n = T_ * double(F);
  const size_t first = s.fwd.size();  // Megatron's `mlp` module: the dense MLP whole
  tp_all_reduce(s, "mlp.input", false);
  if (c_.gated_mlp) {
    swiglu(s, "mlp", T_, F, c_.bias);
  } else {
    linear(s, "mlp.fc1", T_, d_, F, c_.bias);
    switch (c_.act) {
      case Activation::gelu: unary(s, "mlp.act", "aten::gelu", "aten::gelu_backward", n, 8); break;
      case Activation::gelu_tanh: unary(s, "mlp.act", "aten::gelu (tanh)", "aten::gelu_backward (tanh)", n, 8); break;
      case Activation::relu: unary(s, "mlp.act", "aten::relu", "aten::threshold_backward", n, 1); break;
      case Activation::silu: unary(s, "mlp.act", "aten::silu", "aten::silu_backward", n, 4); break;
      case Activation::gelu_new: {
        // 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))), op by op.
        auto scalar = [&](const std::string& nm) {
          s.op(pointwise("mlp.act." + nm, dt_, n, 2, 1), {pointwise("mlp.act." + nm + " (backward)", dt_, n, 2, 1)});
        };
        s.backward_only({accumulate("mlp.act.x", n, 2)});  // x feeds mul, pow and add
        scalar("mul aten::mul");
        s.op(pointwise("mlp.act.pow aten::pow", dt_, n, 2, 2),
             {pointwise("mlp.act.pow aten::pow (backward)", dt_, n, 2, 2), pointwise("mlp.act.pow aten::mul (backward)", dt_, n, 2, 1),
              pointwise("mlp.act.pow aten::mul (backward, grad)", dt_, n, 3, 1)});
        scalar("mul_1 aten::mul");
        s.op(pointwise("mlp.act.add aten::add", dt_, n, 3, 1));
        scalar("mul_2 aten::mul");
        unary(s, "mlp.act.tanh", "aten::tanh", "aten::tanh_backward", n, 6);
        s.op(pointwise("mlp.act.add_1 aten::add", dt_, n, 2, 1));
        s.op(pointwise("mlp.act.mul_3 aten::mul", dt_, n, 3, 1),
             {times(pointwise("mlp.act.mul_3 aten::mul (backward)", dt_, n, 3, 1), 2)});
        break;
      }
    }
    linear(s, "mlp.fc2", T_, F, d_, c_.bias);
  }
  tp_all_reduce(s, c_.gated_mlp ? "mlp.down_proj" : "mlp.fc2", true);
  recompute_from(s, first, kRecomputeMlp);
  dropout(s, "mlp.dropout", Tn_ * d_, c_.hidden_dropout);
}

}  // namespace kcast::synth::transformer
