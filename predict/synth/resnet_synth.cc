// torchvision's ResNets at 224x224, NCHW, PyTorch eager with cuDNN: ResNet-18/34 of basic blocks
// (two 3x3 convs), ResNet-50/101/152 of bottlenecks (v1.5: the stride on the 3x3 conv).
// Convolutions are `conv` rows with their implicit-GEMM shape: forward m = N*Ho*Wo, n = Cout,
// k = Cin*kh*kw; backward data m = N*Ho*Wo, n = Cin, k = Cout*kh*kw (the flop-equivalent shape,
// which strided convolutions reach by skipping zeros) and backward filter m = Cout, n = Cin*kh*kw,
// k = N*Ho*Wo; bytes are input + filter + output once, not the im2col matrix. The stem conv has no
// data gradient (the image needs none). Batch norm runs as one cuDNN kernel (training reads its
// input twice: statistics, then normalize), ReLU in place, residual add in place.
#include <string>

#include "model/error.h"
#include "predict/synth/emitter.h"
#include "predict/synth/resnet_synth.h"

namespace kcast::synth {

namespace {

constexpr KernelClass EW = KernelClass::elementwise;

struct Act {
  int64_t c, h, w;  // channels, height, width of an activation (batch separate)
};

class ResNetSynth {
 public:
  ResNetSynth(const ResNetConfig& cfg, const SynthOptions& o) : cfg_(cfg), o_(o), train_(o.mode == Mode::train) {
    dt_ = o.dtype.value_or(DType::fp32);
    e_ = dtype_bytes(dt_);
    N_ = (o.batch ? o.batch : 1) / o.dp;  // one data-parallel replica's share of the global batch
  }

  std::vector<Kernel> run() {
    Section& stem = tape_.section("stem.", 1);
    Act x{3, 224, 224};
    x = conv(stem, "conv1", x, 64, 7, 2, 3, /*data_grad=*/false);
    bn_relu(stem, "bn1", x);
    x = maxpool(stem, x);
    const int64_t widths[] = {64, 128, 256, 512};
    for (int st = 0; st < 4; ++st) {
      const std::string name = "layer" + std::to_string(st + 1);
      const int64_t n = cfg_.blocks[st];
      // The first block of a stage changes the width or the resolution, so it runs alone; the
      // others are identical and run as one set of rows with count n - 1.
      x = block(tape_.section(name + ".0.", 1), x, widths[st], st == 0 ? 1 : 2);
      const std::string rest = n == 2 ? ".1." : ".1-" + std::to_string(n - 1) + ".";
      if (n > 1) x = block(tape_.section(name + rest, double(n - 1)), x, widths[st], 1);
    }
    Section& head = tape_.section("head.", 1);
    const double in = double(N_) * x.c * x.h * x.w, out = double(N_) * x.c;
    head.op(work("avgpool aten::adaptive_avg_pool2d", KernelClass::reduction, dt_, in, (in + out) * e_),
            {work("avgpool aten::adaptive_avg_pool2d_backward", EW, dt_, in, (in + out) * e_)});
    const int64_t classes = 1000;
    head.op(gemm("fc aten::addmm", dt_, 1, N_, classes, x.c),
            {gemm("fc aten::mm (dgrad)", dt_, 1, N_, x.c, classes), gemm("fc aten::mm (wgrad)", dt_, 1, classes, x.c, N_),
             work("fc aten::sum (bias grad)", KernelClass::reduction, dt_, double(N_) * classes,
                  (double(N_) + 1) * classes * e_)});
    head.param(classes * x.c);
    head.param(classes);
    if (train_ && o_.loss) {
      Section& loss = tape_.section("loss.", 1);
      const double n = double(N_) * classes;
      loss.op(over_rows(work("cross_entropy aten::_log_softmax", KernelClass::softmax, dt_, 5 * n, 2 * n * e_), double(N_), classes),
              {over_rows(work("cross_entropy aten::_log_softmax_backward_data", KernelClass::softmax, dt_, 4 * n, 3 * n * e_),
                         double(N_), classes)});
      loss.op(work("cross_entropy aten::nll_loss_forward", KernelClass::reduction, dt_, double(N_), double(N_) * 12),
              {work("cross_entropy aten::nll_loss_backward", EW, dt_, double(N_), n * e_ + double(N_) * 12)});
    }
    return tape_.assemble(o_, dt_);
  }

  Footprint footprint() const {
    Footprint f = tape_.footprint(o_, dt_, 0, dt_);
    f.step_tokens = double(N_) * double(o_.dp);
    f.step_unit = "images";
    return f;
  }

 private:
  const ResNetConfig& cfg_;
  const SynthOptions& o_;
  bool train_;
  DType dt_;
  double e_;
  int64_t N_;
  Tape tape_;

  double numel(const Act& a) const { return double(N_) * a.c * a.h * a.w; }

  Act conv(Section& s, const std::string& name, Act in, int64_t cout, int64_t k, int64_t stride, int64_t pad,
           bool data_grad = true) {
    Act out{cout, (in.h + 2 * pad - k) / stride + 1, (in.w + 2 * pad - k) / stride + 1};
    const int64_t m = N_ * out.h * out.w, kk = in.c * k * k;
    const double wts = double(cout) * kk, x = numel(in), y = numel(out);
    auto as_conv = [&](Kernel g, double bytes) {
      g.cls = KernelClass::conv;
      g.bytes = bytes;
      return g;
    };
    std::vector<Kernel> bwd;
    if (data_grad && train_)
      bwd.push_back(as_conv(gemm(name + " aten::convolution_backward (data)", dt_, 1, m, in.c, cout * k * k),
                            (y + wts + x) * e_));
    bwd.push_back(as_conv(gemm(name + " aten::convolution_backward (filter)", dt_, 1, cout, kk, m), (y + x + wts) * e_));
    s.op(as_conv(gemm(name + " aten::cudnn_convolution", dt_, 1, m, cout, kk), (x + wts + y) * e_), std::move(bwd));
    s.param(int64_t(wts));
    return out;
  }

  void bn(Section& s, const std::string& name, const Act& a) {
    const double n = numel(a), c = double(a.c);
    s.op(work(name + " aten::cudnn_batch_norm", KernelClass::normalization, dt_, 8 * n,
              (train_ ? 3 : 2) * n * e_ + 4 * c * 4),
         {work(name + " aten::cudnn_batch_norm_backward", KernelClass::normalization, dt_, 10 * n, 5 * n * e_ + 4 * c * 4)});
    s.param(a.c);
    s.param(a.c);
  }

  void relu(Section& s, const std::string& name, const Act& a) {
    const double n = numel(a);
    s.op(pointwise(name + " aten::relu_", dt_, n, 2, 1), {pointwise(name + " aten::threshold_backward", dt_, n, 3, 1)});
  }

  void bn_relu(Section& s, const std::string& name, const Act& a) {
    bn(s, name, a);
    relu(s, "relu", a);
  }

  Act maxpool(Section& s, const Act& in) {
    Act out{in.c, (in.h + 2 - 3) / 2 + 1, (in.w + 2 - 3) / 2 + 1};
    const double x = numel(in), y = numel(out);
    s.op(work("maxpool aten::max_pool2d_with_indices", KernelClass::reduction, dt_, 9 * y, (x + y) * e_ + y * 8),
         {pointwise("maxpool aten::zero_ (grad input)", dt_, x, 1, 0),
          work("maxpool aten::max_pool2d_with_indices_backward", EW, dt_, y, (x + y) * e_ + y * 8)});
    return out;
  }

  // One residual block. torchvision adds a 1x1 downsample conv where the block changes the
  // resolution or the channel count (the first block of every bottleneck stage; of basic-block
  // stages 2-4 only, since their first stage keeps 64 channels at stride 1).
  Act block(Section& s, Act in, int64_t width, int64_t stride) {
    // The block input feeds conv1 and the identity/downsample path.
    s.backward_only({pointwise("input aten::add (grad accumulate)", dt_, numel(in), 3, 1)});
    const int64_t out_c = cfg_.bottleneck ? 4 * width : width;
    Act a = in;
    if (cfg_.bottleneck) {
      a = conv(s, "conv1", a, width, 1, 1, 0);
      bn(s, "bn1", a);
      relu(s, "relu1", a);
      a = conv(s, "conv2", a, width, 3, stride, 1);
      bn(s, "bn2", a);
      relu(s, "relu2", a);
      a = conv(s, "conv3", a, out_c, 1, 1, 0);
      bn(s, "bn3", a);
    } else {
      a = conv(s, "conv1", a, width, 3, stride, 1);
      bn(s, "bn1", a);
      relu(s, "relu1", a);
      a = conv(s, "conv2", a, width, 3, 1, 1);
      bn(s, "bn2", a);
    }
    if (stride != 1 || in.c != out_c) {
      Act d = conv(s, "downsample.0", in, out_c, 1, stride, 0);
      bn(s, "downsample.1", d);
    }
    s.op(pointwise("residual aten::add_", dt_, numel(a), 3, 1));
    relu(s, cfg_.bottleneck ? "relu3" : "relu2", a);
    return a;
  }
};

}  // namespace

const std::vector<ResNetConfig>& builtin_resnets() {
  // Block counts per stage and parameter counts from torchvision (He et al. 2016, table 1).
  static const std::vector<ResNetConfig> kModels = {
      {"resnet18", false, {2, 2, 2, 2}, "ResNet-18 CNN at 224x224, basic blocks, 11.7M params; fp32"},
      {"resnet34", false, {3, 4, 6, 3}, "ResNet-34 CNN at 224x224, basic blocks, 21.8M params; fp32"},
      {"resnet50", true, {3, 4, 6, 3}, "ResNet-50 v1.5 CNN at 224x224 (conv as implicit GEMM), 25.6M params; fp32"},
      {"resnet101", true, {3, 4, 23, 3}, "ResNet-101 v1.5 CNN at 224x224, 44.5M params; fp32"},
      {"resnet152", true, {3, 8, 36, 3}, "ResNet-152 v1.5 CNN at 224x224, 60.2M params; fp32"},
  };
  return kModels;
}

const ResNetConfig* find_builtin_resnet(const std::string& lower_name) {
  for (const auto& c : builtin_resnets())
    if (lower_name == c.name) return &c;
  return nullptr;
}

std::vector<Kernel> synthesize_resnet(const ResNetConfig& cfg, const SynthOptions& opt, Footprint* fp) {
  const std::string name = cfg.name;
  if (opt.batch < 0) throw InputError("option '--batch': must be positive");
  if (opt.mode == Mode::decode)
    throw InputError("option '--mode': decode generates tokens with a decoder; " + name + " is a CNN (infer or train)");
  if (opt.seq) throw InputError("option '--seq': " + name + " takes no sequence length (224x224 images)");
  if (opt.kv_cache_dtype) throw InputError("option '--kv-cache-dtype': " + name + " has no KV cache");
  if (opt.runtime == Runtime::serving)
    throw InputError("option '--runtime': serving is synthesized for llama-like decoders, not " + name);
  if (opt.recompute || opt.selective_recompute)
    throw InputError("option '--recompute': synthesized for transformers, not " + name);
  if (opt.attention != AttentionImpl::eager) throw InputError("option '--attention': " + name + " has no attention");
  if (opt.head != HeadKind::automatic) throw InputError("option '--head': " + name + " has only its classifier");
  if (opt.layers || opt.hidden || opt.heads || opt.kv_heads || opt.ffn || opt.vocab)
    throw InputError("options '--layers/--hidden/--heads/--kv-heads/--ffn/--vocab' apply to transformers, not " + name);
  if (opt.dtype && (*opt.dtype == DType::fp8 || *opt.dtype == DType::fp4 || *opt.dtype == DType::int8 ||
                    *opt.dtype == DType::fp64))
    throw InputError("option '--dtype': " + std::string(to_string(*opt.dtype)) +
                     " is not supported by synth (fp32, tf32, fp16, bf16)");
  if (opt.tp > 1 || opt.pp > 1 || opt.ep > 1 || opt.microbatches > 1 || opt.virtual_stages > 1)
    throw InputError("options '--tp/--pp/--ep/--microbatches' apply to transformers; " + name + " takes --dp");
  check_parallelism(opt);
  ResNetSynth s(cfg, opt);
  std::vector<Kernel> out = s.run();
  if (fp) *fp = s.footprint();
  return out;
}

}  // namespace kcast::synth
