#!/usr/bin/env python3
"""Plots a `sluice bench --json` report: throughput (samples/s, GB/s) and each
node's cache occupancy over time, into one PNG.

    plot_bench.py REPORT.json OUT.png

Needs matplotlib (Debian: python3-matplotlib); exits with status 3 and says so
when it is missing.
"""
import json
import sys


def rates(series, key):
    """Per-interval rate of a cumulative counter: (midpoints, values)."""
    ts, vs = [], []
    for a, b in zip(series, series[1:]):
        dt = b["t"] - a["t"]
        if dt > 0:
            ts.append((a["t"] + b["t"]) / 2)
            vs.append((b[key] - a[key]) / dt)
    return ts, vs


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: plot_bench.py REPORT.json OUT.png\n")
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plot_bench.py: matplotlib is not installed "
                         "(Debian: apt-get install python3-matplotlib)\n")
        return 3
    with open(argv[1]) as f:
        report = json.load(f)
    series = report["series"]
    job = report["job"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    t, sps = rates(series, "samples")
    _, bps = rates(series, "sample_bytes")
    per = "s" if report.get("series_unit", "s") == "s" else "step"
    top.plot(t, sps, color="tab:blue", label="samples/" + per)
    top.set_ylabel("samples/" + per)
    if any(bps):  # a plan knows samples, not their bytes
        right = top.twinx()
        right.plot(t, [b / 1e9 for b in bps], color="tab:orange", label="GB/" + per)
        right.set_ylabel("GB/" + per)
    top.set_title(("sluice bench --plan-only" if report["mode"] == "plan" else "sluice bench") + ": %d nodes x %d ranks x %d workers, batch %d"
                  % (job["nodes"], job["ranks_per_node"], job["workers_per_rank"], job["batch_size"]))
    for n in range(job["nodes"]):
        bottom.plot([p["t"] for p in series], [p["cache_bytes"][n] / 2**20 for p in series],
                    label="node %d" % n)
    if job["cache_limit"] is not None:
        bottom.axhline(job["cache_limit"] / 2**20, color="gray", linestyle="--", label="cache_limit")
    bottom.set_ylabel("cache MiB")
    unit = "seconds" if report.get("series_unit", "s") == "s" else "consumer steps"
    bottom.set_xlabel(unit)
    bottom.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=80)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
