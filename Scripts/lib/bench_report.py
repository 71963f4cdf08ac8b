#!/usr/bin/env python3
"""Prints Kiln's benchmark comparisons as a table: case, Kiln, baseline, ratio, target.

Reads the `histogramSamples` export of ordo-one/benchmark (one TSV per benchmark and
metric) from the folder given as the first argument, pairs `<case> | kiln ×N` with
`<case> | baseline ×N`, and checks each ratio against the targets file (second argument):
lines of `<case>\t<max ratio>`; `#` starts a comment. Exits 1 when a target is missed.

  --json FILE   also writes the table as JSON: a list of {case, kiln, baseline, ratio,
                target, met}, times in nanoseconds per operation, target and met null
                when the case has none.
  --smoke       a smoke run: prints the table, checks no target.
"""
import json
import os
import re
import sys

SUFFIX = ".histogram.samples.tsv"
NAME = re.compile(r"^(?P<case>.+) \| (?P<side>kiln|baseline) ×(?P<batch>\d+)$")


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def read_samples(folder):
    """{(case, side): {"batch": N, metric: [samples...]}}"""
    results = {}
    for file in os.listdir(folder):
        if not file.endswith(SUFFIX):
            continue
        stem = file[: -len(SUFFIX)]
        # <baseline>.<target>.<name>.<metric>; the name may contain dots.
        parts = stem.split(".")
        if len(parts) < 4:
            continue
        metric = parts[-1]
        name = ".".join(parts[2:-1]).replace("_", " ")
        match = NAME.match(name)
        if not match:
            continue
        with open(os.path.join(folder, file)) as handle:
            lines = handle.read().splitlines()
        samples = [float(v) for v in lines[1:] if v.strip()]
        entry = results.setdefault((match["case"], match["side"]), {"batch": int(match["batch"])})
        entry[metric] = samples
    return results


def read_targets(path):
    targets = {}
    if path and os.path.exists(path):
        with open(path) as handle:
            for line in handle:
                line = line.split("#", 1)[0].rstrip("\n")
                if not line.strip():
                    continue
                case, ratio = line.split("\t")[:2]
                targets[case.strip()] = float(ratio)
    return targets


def duration(ns):
    if ns != ns:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def finite(value):
    """A JSON-safe number: None for NaN."""
    return None if value != value else value


def main():
    args = sys.argv[1:]
    json_path = None
    smoke = "--smoke" in args
    args = [arg for arg in args if arg != "--smoke"]
    if "--json" in args:
        index = args.index("--json")
        json_path = args[index + 1]
        del args[index : index + 2]
    folder = args[0]
    targets = {} if smoke else read_targets(args[1] if len(args) > 1 else None)
    results = read_samples(folder)
    records = []
    cases = sorted({case for case, _ in results})
    rows = [("case", "Kiln / op", "baseline / op", "ratio", "target", "allocs / op (Kiln, baseline)")]
    missed = []
    for case in cases:
        kiln, base = results.get((case, "kiln")), results.get((case, "baseline"))
        if not kiln or not base:
            continue
        k = percentile(kiln.get("wallClock", []), 50) / kiln["batch"]
        b = percentile(base.get("wallClock", []), 50) / base["batch"]
        ratio = k / b if b else float("nan")
        target = targets.get(case)
        if target is None:
            verdict = "—"
        elif ratio <= target:
            verdict = f"≤ {target:g}× ✓"
        else:
            verdict = f"≤ {target:g}× ✗"
            missed.append(case)
        ka = percentile(kiln.get("mallocCountTotal", []), 50) / kiln["batch"]
        ba = percentile(base.get("mallocCountTotal", []), 50) / base["batch"]
        shown = f"{ratio:.2f}×" if ratio >= 0.1 else f"{ratio:.2g}×"
        rows.append((case, duration(k), duration(b), shown, verdict, f"{ka:.3g}, {ba:.3g}"))
        records.append(
            {
                "case": case,
                "kiln": finite(k),
                "baseline": finite(b),
                "ratio": finite(ratio),
                "target": target,
                "met": None if target is None else ratio <= target,
            }
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(records, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    for case in sorted(set(targets) - set(cases)):
        print(f"(no measurement for target '{case}')")
    if missed:
        print(f"\n{len(missed)} target(s) missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
