#!/usr/bin/env python3
"""A model x GPU x GPU-count sweep of `kcast plan train`, fanned out with Dask distributed.

Each task is one `kcast.plan("train", ...)` call (the layouts of one run, ranked in-process on the
worker); the client gathers the best layout of each. Runs on a LocalCluster by default, or unchanged
on a real cluster: `--scheduler tcp://HOST:8786` (workers need `import kcast`: the package installed,
or PYTHONPATH=build/python).

usage: PYTHONPATH=build/python python3 examples/plan_dask.py [--scheduler ADDRESS] [--quick]
"""
import argparse
import itertools

from dask.distributed import Client, LocalCluster

import kcast


def best_layout(model, gpu, gpus, batch, seq):
    """The top layout of one run as kcast plan train ranks it (None when nothing fits)."""
    try:
        top = kcast.plan("train", model, gpu=gpu, gpus=gpus, batch=batch, seq=seq, top=1)
    except kcast.KcastError as e:  # nothing fits: say why instead of failing the sweep
        return {"model": model, "gpu": gpu, "gpus": gpus, "best": None, "why": str(e)}
    return {"model": model, "gpu": gpu, "gpus": gpus, "best": top[0], "why": ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheduler", help="a Dask scheduler's address (default: a LocalCluster of 2 workers)")
    ap.add_argument("--quick", action="store_true", help="a small sweep (the test suite's)")
    a = ap.parse_args()
    models = ["llama3-8b"] if a.quick else ["llama3-8b", "llama3-70b", "qwen3-32b"]
    gpu_kinds = ["H100-SXM", "B200"] if a.quick else ["A100-SXM4-80GB", "H100-SXM", "H200", "B200"]
    counts = [8, 16] if a.quick else [8, 16, 64, 256]
    runs = list(itertools.product(models, gpu_kinds, counts))
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None))
    with client:
        futures = client.map(lambda r: best_layout(r[0], r[1], r[2], 16 * r[2], 4096), runs)
        results = client.gather(futures)
    print(f"{'model':<12} {'gpu':<16} {'gpus':>5}  best layout (tp/pp/cp/dp, micro-batch, recompute)  tokens/s/GPU")
    for r in results:
        b = r["best"]
        if b is None:
            print(f"{r['model']:<12} {r['gpu']:<16} {r['gpus']:>5}  nothing fits: {r['why']}")
            continue
        lay = f"{b['tp']}/{b['pp']}/{b['cp']}/{b['dp']}, mbs {b['micro_batch_size']}, {b['recompute']}"
        print(f"{r['model']:<12} {r['gpu']:<16} {r['gpus']:>5}  {lay:<50} {b['tokens_per_s_per_gpu']:>10.0f}")
    assert len(results) == len(runs)


if __name__ == "__main__":
    main()
