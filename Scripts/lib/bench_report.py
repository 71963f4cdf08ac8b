#!/usr/bin/env python3
"""Prints Kiln's benchmark comparisons as a table: case, Kiln, baseline, ratio, target.

Reads the rounds each comparison wrote (`KilnBenchmarkSupport`, `KILN_BENCH_ROUNDS`) from
the folder given as the first argument: one JSON file per comparison, {case, kilnBatch,
baselineBatch, rounds}, each round `[kiln ns, baseline ns, kiln allocations, baseline
allocations]` for one iteration of each side, measured back to back. Reports each side's
median time per operation and the median of the per-round ratios, and checks each ratio
against the targets file (second argument): lines of `<case>\t<max ratio>`; `#` starts a
comment. Exits 1 when a target is missed.

  --json FILE   also writes the table as JSON: a list of {case, kiln, baseline, ratio,
                target, met}, times in nanoseconds per operation, target and met null
                when the case has none.
  --smoke       a smoke run: prints the table, checks no target.
  --partial     only some benchmarks ran (`--target`, `--filter`): a target without a
                measurement is expected. In a full run it is a missed target: a benchmark
                that stopped reporting must not pass silently.
"""
import json
import os
import sys


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def median(values):
    return percentile(values, 50)


def read_rounds(folder):
    """{case: {"kilnBatch": N, "baselineBatch": M, "rounds": [[k ns, b ns, k allocs, b allocs]...]}}"""
    results = {}
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".json"):
            continue
        with open(os.path.join(folder, file)) as handle:
            document = json.load(handle)
        results[document["case"]] = document
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
    partial = "--partial" in args
    args = [arg for arg in args if arg not in ("--smoke", "--partial")]
    if "--json" in args:
        index = args.index("--json")
        json_path = args[index + 1]
        del args[index : index + 2]
    folder = args[0]
    targets = {} if smoke else read_targets(args[1] if len(args) > 1 else None)
    results = read_rounds(folder)
    records = []
    cases = sorted(results)
    rows = [("case", "Kiln / op", "baseline / op", "ratio", "target", "allocs / op (Kiln, baseline)")]
    missed = []
    for case in cases:
        document = results[case]
        kiln_batch, base_batch = document["kilnBatch"], document["baselineBatch"]
        rounds = document["rounds"]
        k = median([r[0] for r in rounds]) / kiln_batch
        b = median([r[1] for r in rounds]) / base_batch
        ratio = median([(r[0] / kiln_batch) / (r[1] / base_batch) for r in rounds if r[1] > 0])
        target = targets.get(case)
        if target is None:
            verdict = "—"
        elif ratio <= target:
            verdict = f"≤ {target:g}× ✓"
        else:
            verdict = f"≤ {target:g}× ✗"
            missed.append(case)
        ka = median([r[2] for r in rounds]) / kiln_batch
        ba = median([r[3] for r in rounds]) / base_batch
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
    if not partial:
        for case in sorted(set(targets) - set(cases)):
            print(f"no measurement for target '{case}'")
            missed.append(case)
    if missed:
        print(f"\n{len(missed)} target(s) missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
