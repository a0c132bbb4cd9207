#!/usr/bin/env python3
"""Score kcast on Vidur's FP16 LLM layer-op profiles (vLLM-family kernels) per GPU and op.

Each profile row (../shared/data/vidur-llm-ops/<gpu>-<model>-mlp.csv: one model shape, token count and
tensor-parallel degree) becomes one kernel-list row per op, named and shaped as the Sarathi-Serve /
vLLM layer runs it (the profile's README gives the shapes); `kcast predict --mode absolute` predicts
them on the profile's GPU and the script prints |predicted / measured - 1| as median and p90 per GPU
and op, and per GPU for GEMMs and for the other ops. Nothing here is fitted: the profiles only score.

    scripts/validate_vidur_ops.py --kcast build/kcast [--data DIR] [--gpus a100,a40] [--gpu-map KEY=NAME]
                                  [--out FILE]

Profiles are <gpu>-<model>-mlp.csv; the <gpu> key is Vidur's device name (a100, a40, h100, ...), mapped
to the GPU kcast predicts (GPUS below, or any name `kcast gpus` resolves, or --gpu-map key=NAME).
Models without a gated MLP (phi-2) run PyTorch's LayerNorm and vLLM's gelu_new activation_kernel.

Kernels (FP16, per tensor-parallel worker t; E = n_embd, F = n_expanded_embd, hd = E / n_head):
  attn_pre_proj, attn_post_proj, mlp_up_proj, mlp_down_proj   GEMMs ([T x K] . [K x N])
  input_layernorm / post_attention_layernorm   vLLM rms_norm_kernel (phi-2: PyTorch LayerNorm)
  attn_rope     vLLM rotary_embedding_kernel, in place over q and k's rotated dimensions
  mlp_act       vLLM silu_and_mul (act_and_mul_kernel); phi-2: vLLM gelu_new (activation_kernel)
  add           PyTorch's vectorized element-wise add
  emb           the embedding gather (F.embedding = index_select); tensor-parallel rows add the
                vocabulary-shard masking kernels, so only t = 1 rows are scored
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

# Vidur's device names -> kcast's (its a100 profiles ran on A100-SXM4-80GB; h100 on H100 SXM 80GB).
GPUS = {"a100": "A100-SXM4-80GB", "a40": "A40", "h100": "H100-SXM", "h200": "H200", "l40s": "L40S", "l40": "L40",
        "a10": "A10", "a10g": "A10G", "l4": "L4", "b200": "B200", "v100": "V100-SXM2-32GB"}
# The rotated share of each head. phi-2's config rotates 32 of its 80 dimensions (partial_rotary_factor
# 0.4), but its profiled rope times are those of a rotation over the whole head: per thread they come to
# the elements in flight of the Llama profiles' rope (1.33 against 1.29-1.42 on the A100) with 80
# dimensions, 0.53 with 32. Sarathi-Serve's phi-2 passes the whole head to the kernel.
ROTARY_FRACTION = {}
E16 = 2  # bytes per FP16 element


def ops_of(row, model):
    """(op, kernel name, class, m, n, k, bytes) for every op of one profile row."""
    H, KV = int(row["n_head"]), int(row["n_kv_head"])
    E, F = int(row["n_embd"]), int(row["n_expanded_embd"])
    T, t = int(row["num_tokens"]), int(row["num_tensor_parallel_workers"])
    gated = row["use_gated_mlp"].strip().lower() == "true"
    hd = E // H
    layer_norm = not gated  # phi-2: LayerNorm and GELU; the gated (SwiGLU) models: RMSNorm
    out = []
    gemm = lambda op, k, n: out.append((op, "cutlass gemm (" + op + ")", "gemm", T, n, k, ""))
    gemm("attn_pre_proj", E, (H + 2 * KV) * hd // t)
    gemm("attn_post_proj", H * hd // t, E)
    gemm("mlp_up_proj", E, (2 if gated else 1) * F // t)
    gemm("mlp_down_proj", F // t, E)
    norm = "vectorized_layer_norm_kernel" if layer_norm else "vllm::rms_norm_kernel"
    norm_bytes = 2 * T * E * E16 + (2 if layer_norm else 1) * E * E16
    for op in ("input_layernorm", "post_attention_layernorm"):
        out.append((op, norm, "normalization", T, E, 0, norm_bytes))
    rot = int(hd * ROTARY_FRACTION.get(model, 1.0))
    rotated = T * (H + KV) // t * rot
    out.append(("attn_rope", "vllm::rotary_embedding_kernel", "elementwise", T, (H + KV) // t * rot, 0,
                2 * rotated * E16 + T * rot * E16 + T * 8))
    if gated:
        out.append(("mlp_act", "vllm::act_and_mul_kernel (silu)", "elementwise", T, F // t, 0, 3 * T * F // t * E16))
    else:
        out.append(("mlp_act", "vllm::activation_kernel (gelu_new)", "elementwise", T, F // t, 0,
                    2 * T * F // t * E16))
    out.append(("add", "vectorized_elementwise_kernel (add)", "elementwise", T, E, 0, 3 * T * E * E16))
    if t == 1:
        out.append(("emb", "indexSelectLargeIndex (embedding)", "elementwise", T, E, 0, 2 * T * E * E16 + T * 8))
    return out


def load(data, gpus):
    """[(gpu key, model, op, kernel row dict, measured µs)]"""
    rows = []
    for f in sorted(os.listdir(data)):
        if not f.endswith("-mlp.csv") or "-" not in f[: -len("-mlp.csv")]:
            continue
        gpu, model = f[: f.index("-")], f[f.index("-") + 1 : -len("-mlp.csv")]
        if gpu not in gpus:
            continue
        with open(os.path.join(data, f), newline="") as fh:
            for r in csv.DictReader(fh):
                for op, name, cls, m, n, k, nbytes in ops_of(r, model):
                    med = r.get("time_stats.%s.median" % op, "")
                    if not med:
                        continue
                    rows.append((gpu, model, op, dict(name=name, cls=cls, m=m, n=n, k=k, bytes=nbytes),
                                 float(med) * 1e3))
    return rows


def predict(kcast, gpu_name, kernels, tmp):
    """Predicted µs per kernel, in order."""
    src, out = os.path.join(tmp, "k.csv"), os.path.join(tmp, "p.csv")
    with open(src, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["name", "class", "dtype", "m", "n", "k", "bytes"])
        for kd in kernels:
            w.writerow([kd["name"], kd["cls"], "fp16", kd["m"], kd["n"], kd["k"] or "", kd["bytes"]])
    r = subprocess.run([kcast, "predict", "--kernels", src, "--gpu", gpu_name, "--mode", "absolute",
                        "--per-kernel", out, "--format", "csv"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.exit("validate_vidur_ops.py: kcast predict --gpu %s: %s" % (gpu_name, r.stderr.strip()))
    with open(out, newline="") as fh:
        return [float(r["predicted_us"]) for r in csv.DictReader(fh)]


def p90(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(0.9 * len(v)))]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kcast", default=os.path.join(here, "..", "build", "kcast"))
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data", "vidur-llm-ops"))
    ap.add_argument("--gpus", default="", help="profile GPU keys to score (default: every one in --data)")
    ap.add_argument("--gpu-map", action="append", default=[], metavar="KEY=NAME",
                    help="the kcast GPU of a profile key (repeatable)")
    ap.add_argument("--out", help="also write the report to this file")
    a = ap.parse_args()
    for m in a.gpu_map:
        if "=" not in m or not m.split("=", 1)[0] or not m.split("=", 1)[1]:
            sys.exit("validate_vidur_ops.py: option '--gpu-map': expected KEY=NAME, got '%s'" % m)
        GPUS[m.split("=", 1)[0]] = m.split("=", 1)[1]
    if not os.path.isdir(a.data):
        sys.exit("validate_vidur_ops.py: option '--data': no directory " + a.data)
    found = sorted({f[: f.index("-")] for f in os.listdir(a.data) if f.endswith("-mlp.csv") and "-" in f})
    gpus = [g for g in a.gpus.split(",") if g] or found
    rows = load(a.data, gpus)
    if not rows:
        sys.exit("validate_vidur_ops.py: no profiles under " + a.data)
    lines = ["# kcast on Vidur's FP16 layer-op profiles: |predicted / measured - 1| (kcast predict --mode absolute)",
             "# command: scripts/validate_vidur_ops.py --kcast build/kcast --gpus " + ",".join(gpus),
             "%-6s %-26s %6s %8s %8s %10s" % ("gpu", "op", "n", "median", "p90", "pred/meas")]
    with tempfile.TemporaryDirectory() as tmp:
        for g in gpus:
            mine = [r for r in rows if r[0] == g]
            if not mine:
                sys.exit("validate_vidur_ops.py: option '--gpus': no profiles of '%s' under %s" % (g, a.data))
            pred = predict(a.kcast, GPUS.get(g, g), [r[3] for r in mine], tmp)
            by = {}
            for r, p in zip(mine, pred):
                by.setdefault(r[2], []).append(p / r[4])
            groups = [(op, by[op]) for op in sorted(by)]
            groups.append(("GEMMs", [x for op, v in by.items() if op.endswith("_proj") for x in v]))
            groups.append(("non-GEMM ops", [x for op, v in by.items() if not op.endswith("_proj") for x in v]))
            for op, ratios in groups:
                err = [abs(x - 1) for x in ratios]
                lines.append("%-6s %-26s %6d %7.1f%% %7.1f%% %10.2f" % (g, op, len(err), 100 * statistics.median(err),
                                                                       100 * p90(err), statistics.median(ratios)))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
