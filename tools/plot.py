#!/usr/bin/python3
"""Pictures from trainsim reports (python3-matplotlib).

  tools/plot.py run REPORT.json [STEPS.csv] -o PREFIX   breakdown bar, step time over steps, cumulative sync wait
  tools/plot.py sweep SWEEP.json -o PREFIX               tokens/s and scaling efficiency vs nodes, knee marked
  tools/plot.py variance VARIANCE.json -o PREFIX         histogram of projected days, best/worst step-time traces

Writes PREFIX-<name>.png files and prints their paths.
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def save(fig, prefix, name):
    path = f"{prefix}-{name}.png"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)  # -o out/run: out/ need not exist
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(path)


def plot_run(report, steps_csv, prefix):
    b = report["breakdown_s"]
    parts = [("compute", b["compute"]), ("exposed comm", b["exposed_comm"]), ("bubble", b["bubble"]),
             ("optimizer", b["optimizer"])]
    fig, ax = plt.subplots(figsize=(7, 2.2))
    left = 0.0
    colors = ["#4c72b0", "#dd8452", "#c44e52", "#55a868"]
    for (label, v), c in zip(parts, colors):
        ax.barh([0], [v], left=left, color=c, label=f"{label} {v:.3g} s")
        left += v
    ax.set_yticks([])
    ax.set_xlabel("seconds per step (critical stage)")
    ax.set_title(f"{report['scenario']['name']}: where a step goes (MFU {100 * report['mfu']:.1f}%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=4, frameon=False, fontsize=8)
    save(fig, prefix, "breakdown")
    if not steps_csv:
        return
    with open(steps_csv) as f:
        rows = list(csv.DictReader(f))
    steps = [int(r["step"]) for r in rows]
    times = [float(r["time_s"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.plot(steps, times, lw=1)
    ax.set_xlabel("step")
    ax.set_ylabel("step time (s)")
    ax.set_title("step time over the simulated steps")
    save(fig, prefix, "steps")
    # The stretch picture: run length with and without the accumulated sync wait, over the run.
    p = report["projection"]
    total = p["total_steps"]
    frac = [i / 100 for i in range(101)]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.plot([f * total for f in frac], [f * p["days"] for f in frac], label=f"simulated ({p['days']:.1f} days)")
    ax.plot([f * total for f in frac], [f * p["days_without_sync_wait"] for f in frac],
            label=f"without sync wait ({p['days_without_sync_wait']:.1f} days)", ls="--")
    ax.fill_between([f * total for f in frac], [f * p["days_without_sync_wait"] for f in frac],
                    [f * p["days"] for f in frac], alpha=0.2, label=f"stretch {p['stretch_days']:.1f} days")
    ax.set_xlabel("training steps")
    ax.set_ylabel("days")
    ax.set_title("accumulated synchronization wait over the run")
    ax.legend(fontsize=8)
    save(fig, prefix, "stretch")


def plot_sweep(report, prefix):
    pts = [p for p in report["points"] if p.get("feasible")]
    if not pts:
        sys.exit("no feasible point in the sweep")
    nodes = [p["nodes"] for p in pts]
    tps = [p["tokens_per_s"] for p in pts]
    ideal = [tps[0] * n / nodes[0] for n in nodes]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    a1.loglog(nodes, tps, "o-", label="simulated", base=2)
    a1.loglog(nodes, ideal, "--", label="linear", base=2)
    a1.set_xlabel("nodes")
    a1.set_ylabel("tokens/s")
    a1.legend()
    a2.semilogx(nodes, [p["scaling_efficiency"] for p in pts], "o-", base=2)
    a2.axhline(report.get("threshold", 0.9), color="grey", ls=":")
    a2.set_xlabel("nodes")
    a2.set_ylabel("scaling efficiency")
    a2.set_ylim(0, 1.1)
    if report.get("knee_nodes"):
        for ax in (a1, a2):
            ax.axvline(report["knee_nodes"], color="red", ls="--", lw=1)
        a2.annotate(f"knee: {report['knee_nodes']} nodes", (report["knee_nodes"], 0.1), color="red")
    fig.suptitle(f"{report['scenario']['name']} ({report.get('scaling', 'strong')} scaling)")
    save(fig, prefix, "sweep")


def plot_variance(report, prefix):
    runs = report["runs"]
    days = [r["days"] for r in runs]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(days, bins=max(5, len(days) // 3))
    if "dedicated" in report:
        ax.axvline(report["dedicated"]["days"], color="green", ls="--", label="dedicated fabric")
        ax.legend()
    ax.set_xlabel("projected days")
    ax.set_ylabel("runs")
    ax.set_title(f"{report['scenario']['name']}: {len(runs)} seeds")
    save(fig, prefix, "days")
    best = min(runs, key=lambda r: r["step_time_s"]["mean"])
    worst = max(runs, key=lambda r: r["step_time_s"]["mean"])
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.plot(best["step_times"], lw=1, label=f"best (seed {best['seed']})")
    ax.plot(worst["step_times"], lw=1, label=f"worst (seed {worst['seed']})")
    ax.set_xlabel("step")
    ax.set_ylabel("step time (s)")
    ax.legend()
    save(fig, prefix, "best-worst")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["run", "sweep", "variance"])
    ap.add_argument("report")
    ap.add_argument("csv", nargs="?")
    ap.add_argument("-o", "--out", default="trainsim")
    a = ap.parse_args()
    with open(a.report) as f:
        report = json.load(f)
    {"run": lambda: plot_run(report, a.csv, a.out), "sweep": lambda: plot_sweep(report, a.out),
     "variance": lambda: plot_variance(report, a.out)}[a.kind]()


if __name__ == "__main__":
    main()
