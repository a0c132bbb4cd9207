#!/usr/bin/env python3
"""`kcast plan serve` against the serving configurations engine maintainers published (#41).

For every row of the published serving tables (../shared/data/published-llm/serving.csv and
serving-engines.csv: model, GPU, GPU count, tensor / expert parallel layout, lengths, load, measured
latencies and output tokens/s), runs `kcast plan serve` on the row's GPUs under the row's own latencies
as the SLOs (its mean TTFT and ITL, or TPOT, held at the median: `--percentile 50`; max-throughput rows
carry no latency, so no SLO: every configuration at the engine's full batch), searching the load the row
was run under (closed-loop clients for concurrency rows; `--load request-rate`, Poisson arrivals of the
row's request count, for request-rate rows), and prints, per row:

- best: the output tokens/s per GPU of the planner's best configuration under those SLOs, and that
  configuration (replicas x tensor parallel, or x attention data parallel over n GPUs, "depN", or x a
  disaggregated split, "XxP+YxD": X prefill workers of P GPUs and Y decode workers of D GPUs);
- measured: the published configuration's measured output tokens/s per GPU;
- config: the published configuration's own predicted output tokens/s per GPU in the same search
  (its best token budget) and its rank, or why it is not ranked (it misses the SLOs at one client in
  kcast's prediction, or it does not fit).

A row passes when the best configuration's predicted throughput under the SLOs is at least the
published configuration's measured one (best >= measured); the per-row `vs config` column says how it
compares with the published configuration as kcast predicts it. Nothing is fitted here.

Mapping as scripts/validate_serving.py: engine trtllm, fp8 rows with an FP8 KV cache, GPT-OSS as fp4
(its MXFP4 experts), the sources' "DEPn" as attention data parallel with experts over n GPUs.

usage: scripts/validate_plan_serve.py [--kcast build/kcast] [--csv FILE ...]
"""
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate_serving import parse_args  # noqa: E402  (one place for the data's location)


def plan_command(kcast, r):
    dtype = "fp4" if r["model"].startswith("gpt-oss") else r["dtype"]
    args = [kcast, "plan", "serve", r["model"], "--gpu", r["gpu"], "--gpus", r.get("gpus") or r["tp"],
            "--engine", r.get("engine") or "trtllm", "--dtype", dtype, "--input-tokens", r["input_tokens"],
            "--output-tokens", r["output_tokens"], "--top", "1000", "--format", "json", "--percentile", "50"]
    if dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    if not r.get("concurrency"):  # the sources' QPS sweeps and max-throughput runs: open loop
        args += ["--load", "request-rate", "--requests", r.get("num_requests") or "500"]
    itl = r.get("itl_ms") or r.get("tpot_ms")
    if r.get("ttft_ms"):
        args += ["--slo-ttft", r["ttft_ms"]]
    if itl:
        args += ["--slo-itl", itl]
    return args


def published_config(r):
    """The published configuration in the planner's terms: GPUs per replica, TP, PP, EP, attention DP
    ("DEPn": attention data parallel over the replica's n GPUs, tensor parallel 1, experts over n)."""
    tp, pp, ep = int(r.get("tp") or 1), int(r.get("pp") or 1), int(r.get("ep") or 1)
    return {"gpus_per_replica": tp * pp, "tp": 1 if ep > 1 else tp, "pp": pp, "ep": ep, "attention_dp": ep > 1}


def measured_per_gpu(r):
    out = r.get("output_tokens_per_s") or r.get("throughput_tokens_s")
    return float(out) / int(r.get("gpus") or r.get("tp") or 1) if out else None


def main():
    a = parse_args(__doc__)
    passed = failed = unanswered = 0
    for path in a.csv:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        print(f"# {os.path.basename(path)}: {len(rows)} rows")
        print(f"{'model':<16} {'gpus':>4} {'layout':<10} {'in/out':>11} {'load':>6} {'SLO ttft/itl ms':>17} "
              f"{'best':>8} {'best layout':<13} {'measured':>9} {'config':>8} {'rank':>5} {'vs config':>9}  verdict")
        for r in rows:
            pub = published_config(r)
            lay = f"tp{pub['tp']}" + (f" pp{pub['pp']}" if pub["pp"] > 1 else "") + \
                  (f" dep{pub['ep']}" if pub["attention_dp"] else "")
            load = ("c" + r["concurrency"]) if r.get("concurrency") else ("r" + r["request_rate"])
            itl = r.get("itl_ms") or r.get("tpot_ms")
            slo = f"{float(r['ttft_ms']):.0f}/{float(itl):.1f}" if r.get("ttft_ms") and itl else "none"
            head = (f"{r['model']:<16} {r.get('gpus') or r['tp']:>4} {lay:<10} "
                    f"{r['input_tokens'] + '/' + r['output_tokens']:>11} {load:>6} {slo:>17}")
            measured = measured_per_gpu(r)
            p = subprocess.run(plan_command(a.kcast, r), capture_output=True, text=True)
            if p.returncode != 0 or measured is None:
                unanswered += 1
                why = p.stderr.strip().splitlines()[-1] if p.returncode != 0 else "no published throughput"
                print(f"{head}  no answer: {why}")
                continue
            cands = json.loads(p.stdout)
            best = cands[0]["output_tokens_per_s_per_gpu"]
            rank = next((i + 1 for i, c in enumerate(cands) if all(c[k] == v for k, v in pub.items())), None)
            config = f"{cands[rank - 1]['output_tokens_per_s_per_gpu']:>8.0f}" if rank else f"{'-':>8}"
            vs = f"{best / cands[rank - 1]['output_tokens_per_s_per_gpu']:>8.2f}x" if rank else f"{'-':>9}"
            ok = best >= measured
            passed += ok
            failed += not ok
            note = "" if rank else "  (published configuration not ranked: misses the SLOs at one client or does not fit)"
            b = cands[0]
            blay = f"{b['replicas']}x " + (f"dep{b['ep']}" if b["attention_dp"] else f"tp{b['tp']}") + \
                (f" pp{b['pp']}" if b["pp"] > 1 else "")
            if b.get("disaggregated"):  # prefill workers x GPUs + decode workers x GPUs
                blay = f"{b['replicas']}x {b['prefill_workers']}x{b['prefill_tp']}+{b['decode_workers']}x{b['decode_tp']}"
            print(f"{head} {best:>8.0f} {blay:<13} {measured:>9.0f} {config} {rank or '-':>5} {vs}  "
                  f"{'pass' if ok else 'miss'}{note}")
    print(f"\nrows: {passed + failed + unanswered}; pass {passed} (best >= measured), miss {failed}, "
          f"no answer {unanswered}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
