#!/usr/bin/env python3
"""Published LLM serving figures against `kcast serve ... --format json`.

For every row of the published serving tables (default: ../shared/data/published-llm/serving.csv,
NVIDIA NIM's closed-loop AIPerf runs, and serving-engines.csv beside it, TensorRT-LLM's own
max-throughput and QPS sweeps on H100), builds the run in kcast's terms, simulates it, and prints
predicted vs published mean TTFT, ITL (or TPOT), end-to-end latency and output tokens/s, then the
median and p90 of |error| per source and metric. Nothing here is fitted: the figures only check the
model. Rows kcast cannot run yet (expert parallelism with attention data parallelism, models the
serving runtime does not synthesize) are listed as refused, with kcast's message.

Mapping: engine trtllm (NIM serves through TensorRT-LLM); dtype fp8 -> --dtype fp8 --kv-cache-dtype
fp8 (the sources' FP8 engines quantize the KV cache too), bf16 -> --dtype bf16; concurrency ->
--concurrency (closed loop); request_rate -> --request-rate (Poisson; inf: every request at once);
num_requests -> --requests (closed loop without it: kcast's default); ep = n (the sources' "DEPn"
columns) -> --tp n --ep n --attention-dp; GPT-OSS -> --dtype fp4 (its checkpoints' MXFP4 experts).

usage: scripts/validate_serving.py [--kcast build/kcast] [--csv FILE ...]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "published-llm")
METRICS = [("ttft_ms", "ttft_ms", "mean"), ("itl_ms", "itl_ms", "mean"), ("tpot_ms", "tpot_ms", "mean"),
           ("e2e_ms", "e2e_ms", "mean"), ("output_tokens_per_s", "output_tokens_per_s", None),
           ("throughput_tokens_s", "output_tokens_per_s", None)]


def command(kcast, r):
    dtype = r["dtype"]
    if r["model"].startswith("gpt-oss"):
        dtype = "fp4"  # MXFP4 experts whatever the column label says (the sources' README)
    args = [kcast, "serve", r["model"], "--gpu", r["gpu"], "--tp", r.get("tp") or "1", "--engine",
            r.get("engine") or "trtllm", "--dtype", dtype, "--input-tokens", r["input_tokens"], "--output-tokens",
            r["output_tokens"], "--format", "json"]
    if dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    for key in ("pp", "ep"):
        if (r.get(key) or "1") not in ("", "1"):
            args += ["--" + key, r[key]]
    if (r.get("ep") or "1") not in ("", "1"):
        args.append("--attention-dp")  # the sources' "DEPn": attention data parallel, experts over n
    if r.get("concurrency"):
        args += ["--concurrency", r["concurrency"]]
    else:
        args += ["--request-rate", r["request_rate"]]
    if r.get("num_requests"):
        args += ["--requests", r["num_requests"]]
    return args


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def parse_args(doc):
    """--kcast and --csv (default: both published serving tables), for the scripts scoring them."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--kcast", default=os.path.join(ROOT, "build", "kcast"))
    ap.add_argument("--csv", nargs="*", default=[os.path.join(DATA, "serving.csv"),
                                                 os.path.join(DATA, "serving-engines.csv")])
    return ap.parse_args()


def main():
    a = parse_args(__doc__)
    errors = {}  # (source file, metric) -> [|error| %]
    refused = []
    for path in a.csv:
        name = os.path.basename(path)
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        print(f"# {name}: {len(rows)} rows")
        print(f"{'model':<16} {'gpu':<9} {'tp':>2} {'dtype':<5} {'in/out':>11} {'load':>8}  metric               "
              "published  predicted   error")
        for r in rows:
            # The engines' table holds two kinds of run: Triton QPS sweeps and trtllm-bench max throughput.
            group = name + (" online" if "Online Serving" in r.get("note", "") else
                            " max-throughput" if r.get("request_rate") == "inf" else "")
            load = ("c" + r["concurrency"]) if r.get("concurrency") else ("r" + r["request_rate"])
            head = (f"{r['model']:<16} {r['gpu']:<9} {r.get('tp') or '1':>2} {r['dtype']:<5} "
                    f"{r['input_tokens'] + '/' + r['output_tokens']:>11} {load:>8}")
            p = subprocess.run(command(a.kcast, r), capture_output=True, text=True)
            if p.returncode != 0:
                refused.append((name, head, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "?"))
                print(f"{head}  refused: {refused[-1][2]}")
                continue
            j = json.loads(p.stdout)
            for col, key, sub in METRICS:
                if not r.get(col):
                    continue
                pub = float(r[col])
                pred = j[key][sub] if sub else j[key]
                err = (pred - pub) / pub * 100
                errors.setdefault((group, key), []).append(abs(err))
                print(f"{head}  {key:<20} {pub:>10.2f} {pred:>10.2f} {err:>+7.1f}%")
    print("\n# |error| by source and metric (predicted rows only)")
    for (name, key), e in sorted(errors.items()):
        print(f"{name:<32} {key:<20} n={len(e):<3} median {statistics.median(e):5.1f}%  p90 {pct(e, 0.9):5.1f}%")
    every = [x for e in errors.values() for x in e]
    if every:
        print(f"{'all':<32} {'every metric':<20} n={len(every):<3} median {statistics.median(every):5.1f}%  "
              f"p90 {pct(every, 0.9):5.1f}%")
    print(f"refused rows: {len(refused)}")
    for name, head, why in refused:
        print(f"  {name}: {head.split()[0]} {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
