#!/usr/bin/env python3
"""Convert the sampled NeuSight test set (data/sources/neusight-test/) into a kernel list.

`python3 scripts/prepare_neusight_ood.py` writes data/measured/neusight_ood.csv. The rows are the
out-of-distribution GPUs of NeuSight's own evaluation (NVIDIA L4, H100, A100 80GB PCIe): kcast never
fits them; they are scored by scripts/validate_ood.sh. Conversion is the training set's
(scripts/prepare_measured.py, neusight_row): same shapes, bytes and contexts.
"""
import csv
import os

import prepare_measured as pm

SRC = os.path.join(pm.ROOT, "data", "sources", "neusight-test")
# The transcription's columns, as named in NeuSight's CSVs.
COLUMN = {"latency_ms": "Latency", "device": "Device", "kernel": "Kernel Name", "grid_x": "Grid x",
          "grid_y": "Grid y", "grid_z": "Grid z", "block_x": "Block x", "block_y": "Block y",
          "block_z": "Block z"}


def main():
    out = []
    for fname in sorted(os.listdir(SRC)):
        if not fname.endswith(".csv"):
            continue
        with open(os.path.join(SRC, fname)) as f:
            for r in csv.DictReader(f):
                src = {COLUMN.get(k, k): v for k, v in r.items()}
                row = pm.neusight_row(r["op"], src)
                if row:
                    out.append(row)
    pm.write(os.path.join(pm.OUT, "neusight_ood.csv"), out)


if __name__ == "__main__":
    main()
