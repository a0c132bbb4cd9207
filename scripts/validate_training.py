#!/usr/bin/env python3
"""Published LLM pre-training throughputs against `kcast synth --mode train --gpu ... --format json`.

For every row of a published-run table (default ../shared/data/published-llm/training.csv: the
frameworks' maintainers' own runs with their full parallel layouts), builds the command line the run
was launched with in kcast's terms, predicts it, and prints predicted vs published tokens/s per GPU,
then the median and p90 of |error| by source and GPU, dense and mixture-of-experts rows apart.
Nothing here is fitted: the figures only check the model.

Mapping of the table's columns: precision bf16 -> --dtype bf16; fp8 -> --dtype fp8 --recipe delayed
(Transformer Engine's delayed scaling, the containers' default); fp8-current -> --recipe current;
mxfp8 -> --recipe mxfp8; nvfp4 -> --dtype fp4 --recipe nvfp4. dp = gpus / (tp pp cp); micro-batches
per replica = gbs / (dp mbs); Megatron's distributed optimizer -> --zero 1, fsdp > 0 -> --zero 3;
sequence parallelism with tp > 1 (Megatron-Bridge's recipes); --framework megatron (the sources are
Megatron-Bridge and NeMo runs); --fp8-param-gather where the precision recipe keeps FP8 parameters
(fp8_params below); the recipes' --recompute-modules (recompute_modules below) where the table gives
no recompute.

usage: scripts/validate_training.py [--kcast build/kcast] [--csv FILE] [--rows dense|moe|all]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOE = {"deepseek-v3", "deepseek-r1", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b",
       "mixtral-8x7b", "mixtral-8x22b", "llama4-scout", "llama4-maverick", "glm-4.5", "glm-4.5-air", "minimax-m2",
       "qwen3-next-80b-a3b", "kimi-k2"}
RECIPE = {"bf16": ("bf16", None), "fp8": ("fp8", "delayed"), "fp8-current": ("fp8", "current"),
          "mxfp8": ("fp8", "mxfp8"), "nvfp4": ("fp4", "nvfp4")}


BLACKWELL_NVL = {"GB200", "GB300"}


def moe_recipe(r):
    """The expert-parallel settings of Megatron-Bridge's recipe for a row (scripts/performance/configs/
    {deepseek,qwen,gpt_oss}/*_workload_base_configs.py): its dispatcher and whether the dispatch overlaps
    the other micro-batch's compute (moe_a2a_overlap). Every MoE recipe there sets
    expert_tensor_parallel_size=1 (--etp 1). A layout Megatron-Core cannot overlap (pipeline stages without
    interleaving, full recomputation: TransformerConfig refuses it, as kcast does) ran without it."""
    dispatcher, overlap = recipe_dispatcher(r)
    if token_drop(r):
        dispatcher = "alltoall"  # apply_moe_token_drop asserts the alltoall dispatcher
    pp, vp = int(r["pp"]), int(r["vp"] or 1)
    return dispatcher, overlap and not (pp > 1 and vp < 2) and r.get("recompute") != "full"


def token_drop(r):
    """Rows the table notes as "(tokendrop)": Megatron-Bridge's --use_tokendrop, whose apply_moe_token_drop
    (megatron/bridge/training/utils/moe_token_drop.py) sets moe_expert_capacity_factor 1.0 and
    moe_pad_expert_input_to_capacity on the alltoall dispatcher."""
    return "tokendrop" in r.get("note", "")


def recipe_dispatcher(r):
    """moe_recipe's table, before Megatron-Core's conditions on the overlap."""
    model, gpu, prec, ep = r["model"], r["system"], r["precision"], int(r["ep"] or 1)
    narrow_mx = prec in ("mxfp8", "nvfp4")
    if model.startswith("deepseek"):
        # hybridep everywhere; B200 MXFP8 V2 (pp 8, vp 2, ep 32): DeepEP with the overlap; GB200 / GB300 /
        # B300 MXFP8: the overlap.
        if gpu == "B200" and narrow_mx and ep == 32:
            return "deepep", True
        return "hybridep", narrow_mx and gpu in BLACKWELL_NVL | {"B300"}
    if model == "kimi-k2":  # kimi/kimi_workload_base_configs.py: HybridEP on GB200 / GB300 (GB300 MXFP8 overlapped)
        if gpu in BLACKWELL_NVL:
            return "hybridep", narrow_mx and gpu == "GB300"
        return "alltoall", False
    if model == "qwen3-235b-a22b":
        if gpu in BLACKWELL_NVL:
            return "hybridep", False
        return "alltoall", gpu.startswith("H100")  # H100: moe_a2a_overlap=True; B200 / B300: none
    if model == "qwen3-30b-a3b":
        return "hybridep", False
    if model.startswith("gpt-oss"):
        if narrow_mx and gpu in BLACKWELL_NVL | {"B300"}:
            return "hybridep", True
        if gpu == "B300":
            return "hybridep", False
        return "alltoall", gpu == "GB200"
    return "alltoall", False


def recompute_modules(r):
    """The modules Megatron-Bridge's recipe for a row recomputes (recompute_modules in the same
    {deepseek,kimi,gpt_oss}/*_workload_base_configs.py; Megatron's selective granularity): latent
    attention's up projections on the MLA models, the experts' activation and the pre-MLP norm on
    GPT-OSS 120B's BF16 recipes; the Qwen3 and dense recipes name none. Empty: none."""
    model, gpu, prec = r["model"], r["system"], r["precision"]
    pp, ep = int(r["pp"]), int(r["ep"] or 1)
    narrow_mx = prec in ("mxfp8", "nvfp4")
    if model.startswith("deepseek"):
        if gpu == "H100-SXM":
            return ["mla_up_proj", "mlp"]
        if gpu == "B200" and pp == 8 and ep == 32:  # the V2 MXFP8 / NVFP4 layouts
            return ["mla_up_proj", "layernorm", "moe_act"] if prec == "nvfp4" else ["mla_up_proj", "mlp"]
        if gpu == "GB200":
            return ["mla_up_proj"] if prec != "fp8" else ["mlp"]
        if gpu == "GB300":
            return [] if narrow_mx else (["moe_act"] if prec == "bf16" else ["mla_up_proj"])
        return ["mla_up_proj"]
    if model == "kimi-k2":
        if gpu == "H100-SXM":
            return ["mla_up_proj", "mlp"]
        return [] if gpu == "GB300" and prec == "mxfp8" else ["mla_up_proj"]
    if model == "gpt-oss-120b" and gpu in ("B200", "GB200", "H100-SXM"):
        return [] if gpu == "GB200" and narrow_mx else ["layernorm", "moe_act"]
    return []


def cuda_graphs(r):
    """Megatron-Bridge's CUDA graphs for a row (cuda_graph_impl / cuda_graph_scope in the same
    {qwen,deepseek,kimi,gpt_oss}/*_workload_base_configs.py): "full" for full_iteration (one graph for the whole
    step: kcast synth --cuda-graph), a --cuda-graph-modules list for Transformer Engine's per-layer graphs,
    None for none. Where a config's layout differs from the row's (Qwen3-30B-A3B on B200 at one sequence a
    micro-batch ran an older config), the row gets none."""
    model, gpu, prec = r["model"], r["system"], r["precision"]
    ep, mbs, gbs, pp = int(r["ep"] or 1), int(r["mbs"]), int(r["gbs"]), int(r["pp"])
    narrow_mx = prec in ("mxfp8", "nvfp4")
    layer, router = "attn,moe_router,moe_preprocess", "moe_router,moe_preprocess"
    if model == "qwen3-30b-a3b":
        if gpu == "B200":
            return layer if mbs == 4 else None
        if gpu == "GB200":
            return router if prec == "mxfp8" else layer
        if gpu in ("GB300", "B300"):
            return router
        return router if prec == "bf16" else None  # H100: BF16 only
    if model == "qwen3-235b-a22b":
        if gpu == "GB200":
            return layer
        if gpu == "GB300":
            return layer if int(r["gpus"]) == 256 else router  # V2 (256 GPUs) adds attn
        return None
    if model.startswith("deepseek"):
        if gpu in ("GB200", "GB300") and narrow_mx:
            return "full"
        if gpu == "B300":
            return "full" if prec == "mxfp8" else layer
        if gpu == "GB300":
            return layer if prec == "bf16" else None
        if gpu == "GB200":
            return layer
        if gpu == "B200" and narrow_mx and pp == 8 and ep == 32 and prec == "mxfp8":
            return layer
        return None
    if model == "kimi-k2":  # GB300 MXFP8 whole-step; GB200 the router's
        if gpu == "GB300":
            return "full" if prec == "mxfp8" else None
        return router if gpu == "GB200" else None
    if model == "gpt-oss-120b":
        if gpu == "GB300":
            return "full" if narrow_mx and ep == 16 else layer
        if gpu == "B300":
            return layer
        if gpu == "GB200" and narrow_mx and gbs == 1280:
            return "full"
    return None


# DeepSeek-V3's recipes train one multi-token prediction depth and lay their pipelines out so
# (deepseek_workload_base_configs.py, pp_layout by pp x vp; elsewhere an even split).
DEEPSEEK_LAYOUTS = {(8, 4): "Et|(tt|)*30mL", (8, 2): "Et*4|(t*4|)*14tmL", (2, 8): "Et*4|(t*4|)*14tmL"}


def cpu_offload_layers(r):
    """The layers whose activations Megatron-Bridge's recipe for a row offloads to the host
    (cpu_offloading_num_layers in llama/llama3_workload_base_configs.py and llama31_workload_base_configs.py),
    on its Megatron FSDP runs without pipeline stages: Llama 3 70B on GB300 (BF16 30, FP8 current scaling
    20), GB200 (BF16 20, FP8-CS 40) and B200 (FP8-CS 5); Llama 3.1 405B on GB300 (BF16 40, FP8-CS 10) and
    GB200 (FP8-CS 92). 0: none."""
    if int(r["fsdp"] or 0) == 0 or int(r["pp"]) > 1:
        return 0
    table = {("llama3-70b", "GB300", "bf16"): 30, ("llama3-70b", "GB300", "fp8-current"): 20,
             ("llama3-70b", "GB200", "bf16"): 20, ("llama3-70b", "GB200", "fp8-current"): 40,
             ("llama3-70b", "B200", "fp8-current"): 5, ("llama3.1-405b", "GB300", "bf16"): 40,
             ("llama3.1-405b", "GB300", "fp8-current"): 10, ("llama3.1-405b", "GB200", "fp8-current"): 92}
    return table.get((r["model"], r["system"], r["precision"]), 0)


def fp8_params(r):
    """Whether the row's precision recipe keeps FP8 parameters: Megatron-Bridge's delayed, current-scaling
    and MXFP8 recipes set fp8_param_gather (src/megatron/bridge/training/mixed_precision.py), NeMo 2.0's
    bf16_with_fp8_mixed fp8_params; its block-scaled (subchannel) recipe and FSDP runs do not."""
    return r["precision"] in ("fp8", "fp8-current", "mxfp8") and int(r["fsdp"] or 0) == 0


def command(kcast, r):
    gpus, tp, pp, cp = int(r["gpus"]), int(r["tp"]), int(r["pp"]), int(r["cp"])
    vp, ep, mbs, gbs = int(r["vp"] or 1), int(r["ep"] or 1), int(r["mbs"]), int(r["gbs"])
    dp = gpus // (tp * pp * cp)
    dtype, recipe = RECIPE[r["precision"]]
    args = [kcast, "synth", r["model"], "--mode", "train", "--batch", str(gbs), "--seq", r["seq"], "--dtype", dtype,
            "--framework", "megatron", "--attention", "flash", "--master-weights", "--optimizer", "adam",
            "--tp", str(tp), "--pp", str(pp), "--cp", str(cp), "--dp", str(dp),
            "--microbatches", str(max(1, gbs // (dp * mbs))), "--zero", "3" if int(r["fsdp"] or 0) > 0 else "1",
            "--gpu", r["system"], "--format", "json", "-o", os.devnull]
    if recipe:
        args += ["--recipe", recipe]
    if fp8_params(r):
        args.append("--fp8-param-gather")
    if tp > 1:
        args.append("--sequence-parallel")
    if vp > 1:
        args += ["--virtual-stages", str(vp)]
    if ep > 1:
        dispatcher, overlap = moe_recipe(r)
        args += ["--ep", str(ep), "--etp", "1", "--moe-dispatcher", dispatcher]
        if overlap:
            args.append("--moe-a2a-overlap")
        if token_drop(r):
            args += ["--moe-expert-capacity-factor", "1", "--moe-pad-expert-input-to-capacity"]
    if r["model"].startswith("deepseek"):
        args += ["--mtp-layers", "1"]
        if (pp, vp) in DEEPSEEK_LAYOUTS:
            args += ["--pp-layout", DEEPSEEK_LAYOUTS[(pp, vp)]]
    if r["model"] == "kimi-k2" and (pp, vp) == (16, 2):  # its H100 recipe's layout
        args += ["--pp-layout", "Et|(tt|)*30L"]
    if r.get("recompute"):
        args += ["--recompute", r["recompute"]]
    elif recompute_modules(r):
        args += ["--recompute-modules", ",".join(recompute_modules(r))]
    elif cpu_offload_layers(r):
        args += ["--cpu-offload-layers", str(cpu_offload_layers(r))]
    graphs = cuda_graphs(r)
    if graphs == "full":
        args.append("--cuda-graph")
    elif graphs:
        args += ["--cuda-graph-modules", graphs]
    return args


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kcast", default=os.path.join(ROOT, "build", "kcast"))
    ap.add_argument("--csv", default=os.path.join(ROOT, "..", "shared", "data", "published-llm", "training.csv"))
    ap.add_argument("--rows", choices=["dense", "moe", "all"], default="all")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    groups = {}
    refused = 0
    print(f"{'model':<16} {'gpu':<9} {'gpus':>5} {'prec':<11} {'tp pp cp vp ep':<15} {'published':>9} "
          f"{'kcast':>9} {'error':>7}  exposed/bubble/quant/host s")
    for r in rows:
        kind = "moe" if r["model"] in MOE else "dense"
        if a.rows != "all" and kind != a.rows:
            continue
        layout = f"{r['tp']} {r['pp']} {r['cp']} {r['vp'] or 1} {r['ep'] or 1}"
        published = float(r["tokens_per_s_gpu"])
        p = subprocess.run(command(a.kcast, r), capture_output=True, text=True)
        if p.returncode != 0:
            refused += 1
            msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"rc {p.returncode}"
            print(f"{r['model']:<16} {r['system']:<9} {r['gpus']:>5} {r['precision']:<11} {layout:<15} "
                  f"{published:>9.0f} {'-':>9} {'-':>7}  not predicted: {msg}")
            continue
        g = json.loads(p.stdout)[0]
        pred = g["tokens_per_s_per_gpu"]
        err = (pred - published) / published
        source = " ".join(r["source"].split()[:2])
        groups.setdefault((kind, source, r["system"]), []).append(abs(err))
        print(f"{r['model']:<16} {r['system']:<9} {r['gpus']:>5} {r['precision']:<11} {layout:<15} {published:>9.0f} "
              f"{pred:>9.0f} {100 * err:>+6.1f}%  {g['exposed_comm_s']:.2f}/{g['bubble_s']:.2f}/{g['quantize_s']:.2f}/{g['exposed_host_s']:.2f}")
    print()
    print(f"{'rows':<6} {'source':<48} {'gpu':<9} {'n':>3} {'median':>7} {'p90':>7}")
    for (kind, source, gpu), errs in sorted(groups.items()):
        print(f"{kind:<6} {source:<48} {gpu:<9} {len(errs):>3} {100 * statistics.median(errs):>6.1f}% "
              f"{100 * pct(errs, 0.9):>6.1f}%")
    for kind in ("dense", "moe"):
        errs = [e for (k, _, _), v in groups.items() if k == kind for e in v]
        if errs:
            print(f"{kind:<6} {'all':<48} {'all':<9} {len(errs):>3} {100 * statistics.median(errs):>6.1f}% "
                  f"{100 * pct(errs, 0.9):>6.1f}%")
    if refused:
        print(f"{refused} rows not predicted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
