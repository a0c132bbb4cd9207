#!/usr/bin/env python3
"""Fit narrow_power_factor (model_params.h): the power an SM draws under dense FP8 / FP4 tensor math,
relative to watts_per_sm_ghz, on the one FP8 GEMM corpus there is (aiconfigurator, H100-SXM).

A one-dimensional search: for each factor on a grid, `kcast validate --no-transfer --summary` of the
FP8 corpus with the model's other parameters as they are; the factor with the lowest median |error|
is written into the model (in place). The last stage of scripts/fit_default_model.sh.

    scripts/fit_narrow_power.py MODEL.json [--kcast build/kcast] [--measurements FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def median_error(kcast, model, measurements):
    r = subprocess.run([kcast, "validate", "--model", model, "--measurements", measurements, "--no-transfer",
                        "--summary", "--format", "csv"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("fit_narrow_power.py: kcast validate: " + r.stderr.strip())
    rows = [l.split(",") for l in r.stdout.strip().splitlines()]
    head = rows[0]
    for row in rows[1:]:
        rec = dict(zip(head, row))
        if rec.get("class") == "all" and rec.get("mode") == "absolute":
            return 100 * float(rec["median_err"])
    sys.exit("fit_narrow_power.py: no 'all' line in kcast validate's output:\n" + r.stdout)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--kcast", default=os.path.join(here, "..", "build", "kcast"))
    ap.add_argument("--measurements", default=os.path.join(here, "..", "data", "measured", "aiconfigurator_h100_fp8.csv"))
    a = ap.parse_args()
    with open(a.model) as f:
        model = json.load(f)
    grid = [round(1.0 + 0.05 * i, 2) for i in range(21)]  # 1.0 .. 2.0
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        trial = os.path.join(tmp, "m.json")
        for factor in grid:
            model["params"]["narrow_power_factor"] = factor
            with open(trial, "w") as f:
                json.dump(model, f)
            err = median_error(a.kcast, trial, a.measurements)
            print("narrow_power_factor %.2f: median |error| %.2f%%" % (factor, err))
            if best is None or err < best[1] - 1e-9:
                best = (factor, err)
    model["params"]["narrow_power_factor"] = best[0]
    with open(a.model, "w") as f:
        json.dump(model, f, indent=1, sort_keys=True)
        f.write("\n")
    print("fit_narrow_power.py: narrow_power_factor = %.2f (median %.2f%%) -> %s" % (best[0], best[1], a.model))


if __name__ == "__main__":
    main()
