#!/usr/bin/python3
"""Pictures from trainsim reports (python3-matplotlib), and a report page to mail around.

  tools/plot.py run REPORT.json [STEPS.csv] -o PREFIX   step breakdown (whole and per stage), stretch by
                                                        cause over the run, step time over steps
  tools/plot.py sweep SWEEP.json -o PREFIX               tokens/s and scaling efficiency vs nodes, knee marked
  tools/plot.py variance VARIANCE.json -o PREFIX         histogram of projected days (p10/p50/p90), best/worst run
  tools/plot.py memory MEMORY.json -o PREFIX             memory per GPU against HBM, and what would fit
  tools/plot.py report SCENARIO.yaml -o DIR [--sweep NODES] [--variance RUNS] [--set K=V ...]
                                                        runs trainsim, writes every picture above and
                                                        DIR/report.html (self-contained: pictures embedded,
                                                        the console summary, the scenario)

Writes PREFIX-<name>.png files (the folder is created) and prints their paths.
"""
import argparse
import base64
import csv
import html
import json
import os
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator  # noqa: E402

# One colour per part of a step, the same in every picture.
COLORS = {"compute": "#4c72b0", "tp_comm": "#8172b3", "comm": "#dd8452", "bubble": "#c44e52",
          "optimizer": "#55a868", "stragglers": "#937860", "contention": "#da8bc3", "base": "#4c72b0"}


def save(fig, prefix, name, tight=True):
    path = f"{prefix}-{name}.png"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)  # -o out/run: out/ need not exist
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")  # legends placed outside the axes stay in
    plt.close(fig)
    print(path)
    return path


def fmt_s(v):
    return f"{v * 1e3:.0f} ms" if v < 1 else f"{v:.2f} s"


def gb(b):
    return b / 1e9  # GB, as the console prints them


def fmt_gb(v):
    return f"{v * 1e3:.0f} MB" if v < 1 else f"{v:.1f} GB"


def plot_run(report, steps_csv, prefix):
    out = []
    name = report["scenario"]["name"]
    b = report["breakdown_s"]
    parts = [("compute", b["compute"], "compute"), ("TP/CP comm", b.get("tp_comm", 0), "tp_comm"),
             ("exposed DP/PP comm", b["exposed_comm"], "comm"), ("pipeline bubble", b["bubble"], "bubble"),
             ("optimizer + fixed", b["optimizer"], "optimizer")]
    step = report["step_time_s"]["mean"]
    fig, ax = plt.subplots(figsize=(8, 2.6))
    left = 0.0
    for label, v, key in parts:
        ax.barh([0], [v], left=left, color=COLORS[key], label=f"{label} {fmt_s(v)} ({100 * v / step:.0f}%)")
        left += v
    ax.set_yticks([])
    ax.set_xlabel("seconds per step (critical stage)")
    ax.set_title(f"{name}: where a {fmt_s(step)} step goes (MFU {100 * report['mfu']:.1f}%)")
    fig.subplots_adjust(left=0.03, right=0.97, top=0.85, bottom=0.42)
    fig.legend(loc="lower center", ncol=3, frameon=False, fontsize=8)
    out.append(save(fig, prefix, "breakdown", tight=False))

    stages = report.get("breakdown_by_stage_s", [])
    if stages:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        xs = [s["stage"] for s in stages]
        bottom = [0.0] * len(stages)
        for label, key, color in [("compute", "compute", "compute"), ("TP/CP comm", "tp_comm", "tp_comm"),
                                  ("waiting on transfers", "comm_wait", "comm"),
                                  ("waiting on other ranks (bubble)", "bubble", "bubble"),
                                  ("optimizer + fixed", "optimizer", "optimizer")]:
            vals = [s[key] for s in stages]
            ax.bar(xs, vals, bottom=bottom, color=COLORS[color], label=label, width=0.8)
            bottom = [a + v for a, v in zip(bottom, vals)]
        ax.set_xlabel("pipeline stage")
        ax.set_ylabel("seconds per step")
        ax.set_xticks(xs if len(xs) <= 32 else xs[:: max(1, len(xs) // 16)])
        ax.set_ylim(0, max(bottom) * 1.3)
        ax.set_title(f"{name}: each stage's step ({len(stages)} stage{'s' if len(stages) > 1 else ''}, "
                     f"mean over replicas)")
        ax.legend(loc="upper center", ncol=3, fontsize=8, frameon=False)
        out.append(save(fig, prefix, "stages"))

    # The stretch picture: cumulative days over the run, the work itself and each cause of waiting
    # stacked on it.
    p = report["projection"]
    total = p["total_steps"]
    causes = p.get("stretch_days_by_cause", {"bubble": p["stretch_days"]})
    xs = [0, total]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    base = p["days_without_sync_wait"]
    layers = [("GPUs working", base, "base")]
    for key, label in [("bubble", "pipeline bubble"), ("communication", "communication wait (network)"),
                       ("stragglers", "stragglers"), ("contention", "contention (network)")]:
        if causes.get(key, 0) > 0:
            layers.append((label, causes[key], key if key != "communication" else "comm"))
    ax.stackplot(xs, *[[0, v] for _, v, _ in layers], colors=[COLORS[c] for _, _, c in layers],
                 labels=[f"{lab}: {v:.1f} days" for lab, v, _ in layers], alpha=0.85)
    ax.set_xlim(0, total)
    ax.set_ylim(0, p["days"] * 1.05)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "0" if v == 0 else f"{v / 1e3:.0f}k" if total < 1e6 else f"{v / 1e6:.2g}M"))
    ax.set_xlabel("training steps")
    ax.set_ylabel("days since the start")
    ax.set_title(f"{name}: {p['days']:.1f} days, {p['stretch_days']:.1f} of them waiting")
    ax.legend(loc="upper left", fontsize=8)
    out.append(save(fig, prefix, "stretch"))

    if steps_csv:
        with open(steps_csv) as f:
            rows = list(csv.DictReader(f))
        steps = [int(r["step"]) for r in rows]
        times = [float(r["time_s"]) for r in rows]
        fig, ax = plt.subplots(figsize=(8, 3))
        ax.plot(steps, times, lw=1)
        lo, hi = min(times), max(times)
        pad = max((hi - lo) * 0.2, 0.01 * hi)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xlabel("step")
        ax.set_ylabel("step time (s)")
        ax.set_title(f"{name}: step time over the simulated steps")
        out.append(save(fig, prefix, "steps"))
    return out


def node_axis(ax, nodes):
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(nodes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlim(nodes[0] / 1.3, nodes[-1] * 1.3)


def tokens_fmt(v, _):
    return f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k" if v >= 1e3 else f"{v:g}"


def plot_sweep(report, prefix):
    pts = [p for p in report["points"] if p.get("feasible")]
    if not pts:
        sys.exit("no feasible point in the sweep")
    bad = [p["nodes"] for p in report["points"] if not p.get("feasible")]
    nodes = [p["nodes"] for p in pts]
    all_nodes = sorted(nodes + bad)
    tps = [p["tokens_per_s"] for p in pts]
    ideal = [tps[0] * n / nodes[0] for n in nodes]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    runs = report.get("runs", 1)
    if runs > 1:  # mean and 95% interval over the seeds
        a1.errorbar(nodes, tps, yerr=[p.get("tokens_per_s_ci95", 0) for p in pts], fmt="o-", capsize=3,
                    label=f"simulated (mean of {runs} seeds, 95% CI)")
    else:
        a1.plot(nodes, tps, "o-", label="simulated")
    a1.plot(nodes, ideal, "--", color="grey", label="linear scaling")
    a1.set_yscale("log")
    a1.yaxis.set_major_formatter(FuncFormatter(tokens_fmt))
    a1.yaxis.set_minor_formatter(FuncFormatter(tokens_fmt))
    a1.tick_params(axis="y", which="minor", labelsize=7)
    node_axis(a1, all_nodes)
    a1.set_xlabel("nodes")
    a1.set_ylabel("tokens/s")
    a1.legend(loc="upper left")
    eff = [100 * p["scaling_efficiency"] for p in pts]
    if runs > 1:
        lo = [e - 100 * p["scaling_efficiency_ci95"][0] for e, p in zip(eff, pts)]
        hi = [100 * p["scaling_efficiency_ci95"][1] - e for e, p in zip(eff, pts)]
        a2.errorbar(nodes, eff, yerr=[lo, hi], fmt="o-", capsize=3)
    else:
        a2.plot(nodes, eff, "o-")
    thr = 100 * report.get("threshold", 0.9)
    a2.axhline(thr, color="grey", ls=":")
    a2.text(all_nodes[0], thr + 1, f"{thr:.0f}% threshold", fontsize=8, color="grey", va="bottom")
    node_axis(a2, all_nodes)
    a2.set_xlabel("nodes")
    a2.set_ylabel("scaling efficiency (%)")
    a2.set_ylim(0, 110)
    for n in bad:
        for ax in (a1, a2):
            ax.axvspan(n / 1.15, n * 1.15, color="#eeeeee", zorder=0)
        a2.text(n, 55, "infeasible", rotation=90, ha="center", va="center", fontsize=8, color="grey")
    knee = report.get("knee_nodes")
    if knee:
        for ax in (a1, a2):
            ax.axvline(knee, color="red", ls="--", lw=1)
        reason = textwrap.fill(report.get("knee_reason", "").split(" (")[0], 42)
        # Inside the frame: left of the line when it is in the right half of the axis.
        right_half = all_nodes.index(knee) >= len(all_nodes) / 2 if knee in all_nodes else False
        ci = report.get("knee_nodes_ci95")
        if ci and ci[0]:
            a2.axvspan(ci[0] / 1.1, (ci[1] or all_nodes[-1]) * 1.1, color="red", alpha=0.08, zorder=0)
            reason = f"95% CI: {ci[0]:,} to {ci[1]:,} nodes\n" + reason if ci[1] else f"95% CI: from {ci[0]:,} nodes\n" + reason
        a2.annotate(f"knee: {knee:,} nodes\n{reason}", xy=(knee, 8), xytext=(-6 if right_half else 6, 0),
                    textcoords="offset points", ha="right" if right_half else "left", va="bottom", color="red",
                    fontsize=8)
    fig.suptitle(f"{report['scenario']['name']}: {report.get('scaling', 'strong')} scaling")
    return [save(fig, prefix, "sweep")]


def plot_variance(report, prefix):
    runs = report["runs"]
    days = [r["days"] for r in runs]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    window = len(runs[0].get("step_times", [])) if runs else 0
    counts, _, _ = ax.hist(days, bins=max(5, len(days) // 3), color=COLORS["base"], alpha=0.6, edgecolor="white",
                           label=f"each seed's {window}-step window, projected")
    ax.set_ylim(0, max(counts) * 1.6)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    # The run level: the whole run's p10/p50/p90 and the 95% interval of its mean.
    d = report["projection"]["days"]
    rl = report.get("run_level", {})
    if "mean_days_ci95" in rl:
        ax.axvspan(d["mean"] - rl["mean_days_ci95"], d["mean"] + rl["mean_days_ci95"], color="orange", alpha=0.2,
                   label=f"whole run: mean {d['mean']:.1f} days, 95% CI +-{rl['mean_days_ci95']:.1f}")
    lo, hi = ax.get_xlim()
    if d["p90"] - d["p10"] < 0.04 * (hi - lo):  # too close to draw apart: one line, one label
        ax.axvline(d["p50"], color="black", lw=1)
        ax.annotate(f"whole run p10/p50/p90\n{d['p10']:.2f} / {d['p50']:.2f} / {d['p90']:.2f} d", (d["p50"], 1),
                    xycoords=("data", "axes fraction"), xytext=(4, -24), textcoords="offset points", fontsize=8)
    else:
        for q, ls, row in [("p10", ":", 0), ("p50", "-", 1), ("p90", ":", 0)]:
            ax.axvline(d[q], color="black", ls=ls, lw=1)
            ax.annotate(f"run {q} {d[q]:.1f} d", (d[q], 1), xycoords=("data", "axes fraction"), xytext=(3, -12 - 12 * row),
                        textcoords="offset points", fontsize=8)
    if "dedicated" in report:
        ax.axvline(report["dedicated"]["days"], color="green", ls="--",
                   label=f"dedicated fabric {report['dedicated']['days']:.1f} days")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_xlabel("projected days for the whole run")
    ax.set_ylabel("seeds")
    ax.set_title(f"{report['scenario']['name']}: {len(runs)} seeds; the run's days vs the windows' spread")
    out = [save(fig, prefix, "days")]
    best = min(runs, key=lambda r: r["step_time_s"]["mean"])
    worst = max(runs, key=lambda r: r["step_time_s"]["mean"])
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.plot(best["step_times"], lw=1, label=f"best (seed {best['seed']})")
    ax.plot(worst["step_times"], lw=1, label=f"worst (seed {worst['seed']})")
    ax.set_xlabel("step")
    ax.set_ylabel("step time (s)")
    ax.legend(fontsize=8)
    ax.set_title("step times of the best and the worst seed")
    out.append(save(fig, prefix, "best-worst"))
    return out


def plot_memory(report, prefix):
    m = report["memory"]
    b = m["breakdown"]
    cap = gb(m["capacity_bytes"])
    parts = [("weights", "weights", "#4c72b0"), ("gradients", "gradients", "#8172b3"),
             ("optimizer states", "optimizer", "#55a868"), ("activations", "activations", "#dd8452"),
             ("reserve, buffers", "other", "#937860")]
    bars = [("this layout", [gb(b[k]) for _, k, _ in parts], cap)]
    for s in report.get("suggestions", [])[:6]:
        bars.append((s["text"].replace(" would fit", ""), None, gb(s["capacity_bytes"]), gb(s["per_gpu_bytes"])))
    fig, ax = plt.subplots(figsize=(10, 2.2 + 0.5 * len(bars)))
    y = list(range(len(bars)))[::-1]
    left = 0.0
    for (label, _, color), v in zip(parts, bars[0][1]):
        ax.barh([y[0]], [v], left=left, color=color, label=f"{label} {fmt_gb(v)}")
        left += v
    ax.plot([cap, cap], [y[0] - 0.4, y[0] + 0.4], color="red", lw=2)
    for yy, bar in zip(y[1:], bars[1:]):
        label, _, c, total = bar
        ax.barh([yy], [total], color="#bbbbbb")
        ax.plot([c, c], [yy - 0.4, yy + 0.4], color="red", lw=2)
        ax.text(0, yy, f"  {total:.1f} of {c:.1f} GB", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels([bar[0] for bar in bars], fontsize=8)
    ax.set_xlabel(f"GB on the busiest GPU ({report.get('gpu', '')}; red: the capacity its driver reports)")
    used = gb(m["per_gpu_bytes"])
    verdict = f"fits ({used:.1f} of {cap:.1f} GB)" if m["fits"] else f"does not fit ({used:.1f} of {cap:.1f} GB)"
    ax.set_title(f"{report['scenario']['name']}: memory per GPU, {verdict}")
    ax.set_ylim(-0.6, len(bars) - 0.4)
    ax.set_xlim(0, max([cap] + [max(bar[2], bar[3]) for bar in bars[1:]] + [sum(bars[0][1])]) * 1.15)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)
    return [save(fig, prefix, "memory")]


def trainsim_cmd(binary, args):
    r = subprocess.run([binary] + args, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def write_report(a):
    """Runs trainsim on the scenario and writes every picture and DIR/report.html."""
    os.makedirs(a.out, exist_ok=True)
    binary = a.trainsim
    sets = sum([["--set", s] for s in a.set], [])
    pfx = os.path.join(a.out, "")
    run_json, steps_csv, mem_json = pfx + "run.json", pfx + "steps.csv", pfx + "memory.json"
    code, console, err = trainsim_cmd(binary, ["run", a.scenario, "--json", run_json, "--csv", steps_csv, "--quiet"] + sets +
                                      (["--steps", str(a.steps)] if a.steps else []))
    if code == 2:
        sys.exit(err.strip())
    pictures, sections = [], []
    mcode, mconsole, merr = trainsim_cmd(binary, ["memory", a.scenario, "--json", mem_json] + sets)
    if mcode == 2:
        sys.exit(merr.strip())
    with open(mem_json) as f:
        memory = json.load(f)
    with open(run_json) as f:
        run = json.load(f)
    feasible = run.get("feasible", True)
    name = run["scenario"]["name"]
    if feasible:
        pictures += plot_run(run, steps_csv, pfx + name)
        sections.append(("Run", console))
    else:
        sections.append(("Run", err))
    pictures += plot_memory(memory, pfx + name)
    sections.append(("Memory", mconsole))
    if a.sweep:
        sweep_json = pfx + "sweep.json"
        code, sconsole, serr = trainsim_cmd(binary, ["sweep", a.scenario, "--nodes", a.sweep, "--json", sweep_json, "--quiet"] +
                                            sets + (["--steps", str(a.steps)] if a.steps else []))
        if code != 0:
            sys.exit(serr.strip())
        with open(sweep_json) as f:
            pictures += plot_sweep(json.load(f), pfx + name)
        sections.append(("Sweep", sconsole))
    if a.variance:
        var_json = pfx + "variance.json"
        code, vconsole, verr = trainsim_cmd(binary, ["variance", a.scenario, "--runs", str(a.variance), "--json", var_json,
                                                     "--quiet"] + sets + (["--steps", str(a.steps)] if a.steps else []))
        if code != 0:
            sys.exit(verr.strip())
        with open(var_json) as f:
            pictures += plot_variance(json.load(f), pfx + name)
        sections.append(("Variance", vconsole))
    with open(a.scenario) as f:
        scenario_text = f.read()
    imgs = []
    for p in pictures:
        with open(p, "rb") as f:
            data = base64.b64encode(f.read()).decode()
        imgs.append(f'<figure><img alt="{html.escape(os.path.basename(p))}" src="data:image/png;base64,{data}"></figure>')
    pres = "\n".join(f"<h2>{html.escape(t)}</h2>\n<pre>{html.escape(body)}</pre>" for t, body in sections)
    overrides = (" with " + html.escape(" ".join(a.set))) if a.set else ""
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>trainsim report: {html.escape(name)}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}
img{{max-width:100%}}figure{{margin:1em 0}}pre{{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}}</style>
</head><body>
<h1>trainsim report: {html.escape(name)}</h1>
<p>Scenario <code>{html.escape(os.path.basename(a.scenario))}</code>{overrides}. Everything on this page is in this one file.</p>
{''.join(imgs)}
{pres}
<h2>Scenario</h2>
<pre>{html.escape(scenario_text)}</pre>
<script>
// Checked by test/cli/report_html_test.cpp through headless Chromium: every picture decoded.
window.addEventListener("load", function () {{
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute("data-rendered", ok + "/" + imgs.length);
}});
</script>
</body></html>
"""
    path = os.path.join(a.out, "report.html")
    with open(path + ".tmp", "w") as f:
        f.write(page)
    os.replace(path + ".tmp", path)
    print(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["run", "sweep", "variance", "memory", "report"])
    ap.add_argument("report", help="a trainsim JSON report (report: the scenario YAML)")
    ap.add_argument("csv", nargs="?")
    ap.add_argument("-o", "--out", default="trainsim", help="output prefix (report: output folder)")
    ap.add_argument("--trainsim", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "trainsim"))
    ap.add_argument("--sweep", help="report: also sweep these node counts (as trainsim sweep --nodes)")
    ap.add_argument("--variance", type=int, help="report: also run this many seeds")
    ap.add_argument("--steps", type=int, help="report: steps per simulation")
    ap.add_argument("--set", action="append", default=[], help="report: a scenario override (repeatable)")
    a = ap.parse_args()
    if a.kind == "report":
        a.scenario = a.report
        write_report(a)
        return
    with open(a.report) as f:
        report = json.load(f)
    {"run": lambda: plot_run(report, a.csv, a.out), "sweep": lambda: plot_sweep(report, a.out),
     "variance": lambda: plot_variance(report, a.out), "memory": lambda: plot_memory(report, a.out)}[a.kind]()


if __name__ == "__main__":
    main()
