#!/usr/bin/env python3
"""Collect NeuSight's measured end-to-end model latencies into one CSV for kcast validation.

Reads <labels>/<GPU folder>/<model>-<inf|train>-<seq>-<batch>.json (NeuSight, MIT; FP32 PyTorch 2.1,
TF32 off) and writes data/measured/neusight_e2e.csv with the columns
    model,mode,seq,batch,gpu,num_layer,e2e_ms,fw_ms,bwall_ms,source_file,synth_args
`model` is the kcast built-in name; `gpu` the device name (folder name, underscores -> spaces);
`synth_args` the `kcast synth` arguments that reproduce the measured setup: the layer count, any
architecture that differs from the built-in (read from the torch.fx graph CSV beside the JSON; NeuSight's
"GPT-3 XL" is d=3072, 24 heads of 128), and for training `--optimizer none --no-loss` (NeuSight times
forward and backward + gradient accumulation of the logits, without a loss or an optimizer step).
Skipped: switchxl4 (mixture of experts, no kcast model) and the -fusion variants (fused kernels).
With --parallel, only the multi-GPU runs (<...>-<batch>-dp4, -tp4, -pp4_<micro-batches>: NeuSight's
collect_label_distributed.py, accelerate's Megatron-LM engine on 4 GPUs, one whole train_step timed
with CUDA events; `batch` is the global batch) are collected instead, with the matching `--dp`,
`--tp` or `--pp`/`--microbatches` and the Adam step the engine runs inside that call.
A label folder without the graph CSVs (data/sources/neusight-labels keeps only the JSONs) takes a
model's architecture from its graph in the --arch-labels folders: it is the model's, the same on
every GPU.

usage: scripts/neusight_e2e.py [--labels DIR] [--arch-labels DIR]... [--parallel] [-o OUT.csv]
"""
import argparse
import ast
import csv
import json
import os
import re
import sys

MODELS = {
    "bert_large": "bert-large",
    "gpt2_large": "gpt2-large",
    "gpt3_xl": "gpt3-xl",
    "gpt3_27": "gpt3-2.7b",
    "opt_13": "opt-1.3b",
}
# The kcast built-ins' architecture (predict/synth/builtin_models.cc), to spot differences.
BUILTIN = {
    "bert-large": dict(hidden=1024, heads=16, ffn=4096, vocab=30522),
    "gpt2-large": dict(hidden=1280, heads=20, ffn=5120, vocab=50257),
    "gpt3-xl": dict(hidden=2048, heads=16, ffn=8192, vocab=50257),
    "gpt3-2.7b": dict(hidden=2560, heads=32, ffn=10240, vocab=50257),
    "opt-1.3b": dict(hidden=2048, heads=32, ffn=8192, vocab=50272),
}
NAME = re.compile(r"^(?P<model>[a-z0-9_]+)-(?P<mode>inf|train)-(?P<seq>\d+)-(?P<batch>\d+)(?P<fusion>-fusion)?"
                  r"(?:-(?P<par>dp|tp|pp)(?P<degree>\d+)(?:_(?P<micro>\d+))?)?\.json$")


def shape(text):
    try:
        return ast.literal_eval(text) if text else None
    except (ValueError, SyntaxError):
        return None


def graph_arch(csv_path):
    """hidden, heads, ffn, vocab as the traced graph shows them (None where it does not)."""
    arch = {}
    if not os.path.exists(csv_path):
        return arch
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        name, target = r.get("Name", ""), r.get("target", "")
        ins, out = shape(r.get("input_shapes")), shape(r.get("output_shape"))
        if name in ("bert_embeddings_word_embeddings", "transformer_wte", "model_decoder_embed_tokens") and out:
            arch["hidden"] = out[-1]
        if ("matmul" in target or "method bmm" in target) and ins and len(ins) == 2 and "heads" not in arch:
            a, b = ins
            if len(a) == 4:  # [B, H, S, hd] x [B, H, hd, S]
                arch["heads"] = a[1]
            elif len(a) == 3 and "hidden" in arch:  # [B*H, S, hd]
                arch["heads"] = arch["hidden"] // a[2]
        if name in ("bert_encoder_layer_0_intermediate_dense", "model_decoder_layers_0_fc1") and out:
            arch["ffn"] = out[-1]
        if target.startswith("<built-in method addmm") and ins and "ffn" not in arch and "hidden" in arch:
            n = ins[-1][-1]
            if n not in (arch["hidden"], 3 * arch["hidden"]):
                arch["ffn"] = n
        if name in ("lm_head", "cls_predictions_decoder") and out:
            arch["vocab"] = out[-1]
    return arch


def layer_count(folder, model):
    """num_layer of the model's single-GPU labels in `folder` (the multi-GPU labels record 0)."""
    for f in sorted(os.listdir(folder)):
        m = NAME.match(f)
        if m and m["model"] == model and not m["par"]:
            with open(os.path.join(folder, f)) as fh:
                n = json.load(fh).get("num_layer")
            if n:
                return n
    return None


def source_name(root, labels, gpu_dir, fname):
    """A label's path: relative to the project for the labels kept in data/sources, else to ../shared/data."""
    path = os.path.abspath(os.path.join(labels, gpu_dir, fname))
    if path.startswith(os.path.abspath(root) + os.sep):
        return os.path.relpath(path, root)
    return f"neusight-labels/{gpu_dir}/{fname}"


def graph_index(dirs):
    """(model, mode) and (model, None) -> the first torch.fx graph CSV of that model in `dirs`
    (folders of GPU folders, searched in order; sorted within each)."""
    index = {}
    for d in dirs:
        for gpu_dir in sorted(os.listdir(d)):
            sub = os.path.join(d, gpu_dir)
            if not os.path.isdir(sub):
                continue
            for f in sorted(os.listdir(sub)):
                m = NAME.match(f[:-4] + ".json") if f.endswith(".csv") else None
                if m and not m["fusion"]:
                    index.setdefault((m["model"], m["mode"]), os.path.join(sub, f))
                    index.setdefault((m["model"], None), os.path.join(sub, f))
    return index


def find_graph(folder, fname, graphs):
    """The torch.fx graph CSV beside a label, else one of the same model (same mode first) elsewhere."""
    own = os.path.join(folder, fname[:-5] + ".csv")
    if os.path.exists(own):
        return own
    label = NAME.match(fname)
    return graphs.get((label["model"], label["mode"])) or graphs.get((label["model"], None)) or own


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", default=os.path.join(root, "..", "shared", "data", "neusight-labels"))
    ap.add_argument("--arch-labels", action="append", default=[],
                    help="label folders whose graph CSVs give a model's architecture where --labels has none")
    ap.add_argument("-o", "--output", default=os.path.join(root, "data", "measured", "neusight_e2e.csv"))
    ap.add_argument("--parallel", action="store_true",
                    help="collect only the multi-GPU runs (-dp4, -tp4, -pp4_M) instead of the single-GPU ones")
    args = ap.parse_args()
    graphs = graph_index([args.labels] + args.arch_labels)

    rows = []
    for gpu_dir in sorted(os.listdir(args.labels)):
        folder = os.path.join(args.labels, gpu_dir)
        if not os.path.isdir(folder):
            continue
        gpu = gpu_dir.replace("_", " ")
        for fname in sorted(os.listdir(folder)):
            m = NAME.match(fname)
            if not m or m["fusion"] or m["model"] not in MODELS or bool(m["par"]) != args.parallel:
                continue
            model = MODELS[m["model"]]
            with open(os.path.join(folder, fname)) as f:
                j = json.load(f)
            mode = "infer" if m["mode"] == "inf" else "train"
            seq, batch, layers = int(m["seq"]), int(m["batch"]), j.get("num_layer")
            if m["par"]:
                # A whole Megatron-LM step timed at once: its label carries no layer count; the
                # model's single-GPU labels in the same folder do.
                layers = layer_count(folder, m["model"])
            if not layers:
                sys.exit(f"{folder}/{fname}: num_layer is missing")
            synth = [model, "--mode", mode, "--seq", str(seq), "--batch", str(batch), "--layers", str(layers),
                     "--dtype", "fp32"]
            arch = graph_arch(find_graph(folder, fname, graphs))
            for key in ("hidden", "heads", "ffn", "vocab"):
                if key in arch and arch[key] != BUILTIN[model][key]:
                    synth += [f"--{key}", str(arch[key])]
            if m["par"]:
                # accelerate's Megatron-LM engine runs the whole train_step inside model(**batch):
                # forward with the loss, backward, gradient all-reduce and the optimizer update.
                synth += [f"--{m['par']}", m["degree"]] + (["--microbatches", m["micro"]] if m["micro"] else [])
                synth += ["--optimizer", "adam"]
            elif mode == "train":
                synth += ["--optimizer", "none", "--no-loss"]
            rows.append({
                "model": model, "mode": mode, "seq": seq, "batch": batch, "gpu": gpu, "num_layer": layers,
                "e2e_ms": j["e2e_latency"], "fw_ms": j["fw_latency"], "bwall_ms": j["bwall_latency"],
                "source_file": source_name(root, args.labels, gpu_dir, fname), "synth_args": " ".join(synth),
            })
    rows.sort(key=lambda r: (r["model"], r["mode"], r["gpu"], r["seq"], r["batch"]))
    cols = ["model", "mode", "seq", "batch", "gpu", "num_layer", "e2e_ms", "fw_ms", "bwall_ms", "source_file",
            "synth_args"]
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    os.replace(tmp, args.output)
    print(f"wrote {len(rows)} runs to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
