"""Pools the transfer-mode lines of a `kcast validate` output: one line per source->target pair
(class `all`), summarized as the median of the pair medians and the pairs whose median is <= 10%.
usage: python3 scripts/transfer_pairs.py VALIDATE_OUTPUT [--onto GPU,GPU...]
With --onto, also the same for the pairs whose target is one of those GPUs."""
import argparse
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("validate_output")
ap.add_argument("--onto", default="", help="comma-separated target GPUs for a second summary")
args = ap.parse_args()
# Columns: mode source gpu class rows median% mean% p90%
pairs = [l.split() for l in open(args.validate_output) if l.startswith("transfer ") and l.split()[3] == "all"]


def summary(medians):
    return "%d pairs, median of pair medians %.1f%% (%d <= 10%%)" % (
        len(medians), statistics.median(medians), sum(m <= 10 for m in medians))


line = "### transfer: " + summary([float(p[5]) for p in pairs])
onto = set(filter(None, args.onto.split(",")))
if onto:
    line += "; onto %s: %s" % (", ".join(sorted(onto)), summary([float(p[5]) for p in pairs if p[2] in onto]))
print(line)
