#!/usr/bin/env python3
"""The coverage matrix against its targets, from `kernellab-cli bench --matrix` runs on one machine:

    bench/matrix_targets.py --round A.json [B.json ...] [--odd ODD.json] [--npp npp.csv] > targets.md

--round: the matrices at the round size (8192x8192 images, 16M-sample signals), together every cell;
--odd: the same cells at an odd size (8191x8179, 16777213 samples), each held to the round cell's time
per element; --npp: bench/npp_peer.cu's CSV, joined with the round conv2d and transpose cells (run
those with --border replicate, NPP's only border). Each cell's class, memory- or compute-bound, is the
matrix's (`class` in its JSON). Prints the targets table, then the round cells as the README's grid.
Exit 0 when every target is met, 1 when one is not, 2 on bad input.
"""
import argparse
import json
import sys

from npp_compare import npp_ratios

MEMORY_BOUND_PCT = 60.0   # of the device copy
COMPUTE_BOUND_PCT = 55.0  # of the fp32 FMA peak
# (op, case, depth, channels): % of copy
HEADLINES = [
    (("conv2d", "gaussian 5x5 s=1.3", "f32", 1), 85.0),
    (("histogram", "-", "u8", 1), 80.0),
    (("histogram", "-", "f32", 1), 70.0),
    (("transpose", "-", "u8", 1), 90.0),
]
ODD_LIMIT = 1.2  # time per element, odd size over round size
NPP_LEAD = 1.2   # NPP's time over KernelLab's


def key_of(cell):
    return (cell["op"], cell["case"], cell["depth"], int(cell["channels"]))


def name(key):
    op, case, depth, channels = key
    return f"{op} {case} {depth} x{channels}" if case != "-" else f"{op} {depth} x{channels}"


def elements(cell):
    size = cell["size"]
    if "x" in size:
        cols, rows = size.split("x")
        return int(cols) * int(rows)
    return int(size)


def fail(message):
    print(f"matrix_targets.py: {message}", file=sys.stderr)
    sys.exit(2)


def load(paths):
    """The files' matrices and their ok cells by key; exits 2 on a failed cell, a repeated key or a
    matrix without classes."""
    matrices, cells = [], {}
    for path in paths:
        matrix = json.load(open(path))
        matrices.append((path, matrix))
        for cell in matrix["cells"]:
            key = key_of(cell)
            if not cell["ok"]:
                fail(f"{path}: {name(key)} failed: {cell['error']}")
            if "class" not in cell:
                fail(f"{path}: no cell classes (a matrix from before bench --matrix wrote them)")
            if key in cells:
                fail(f"{path}: {name(key)} is in another --round file too")
            cells[key] = cell
    return matrices, cells


def describe(path, matrix):
    roofs = matrix["roofs"]
    return (f"`{path}`: {matrix['device']['name']}, {matrix['date']}, copy {roofs['device_copy_gbs']:.1f} GB/s, "
            f"FMA {roofs['fma_gflops']:.1f} GFLOP/s, {len(matrix['cells'])} cells")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--round", nargs="+", required=True, metavar="JSON")
    parser.add_argument("--odd", metavar="JSON")
    parser.add_argument("--npp", metavar="CSV")
    args = parser.parse_args()
    matrices, cells = load(args.round)
    rows = []  # (target, measured, met)

    for cls, roof, floor in (("memory", "copy", MEMORY_BOUND_PCT), ("compute", "FMA", COMPUTE_BOUND_PCT)):
        of_class = sorted((c["class_pct"], key) for key, c in cells.items() if c["class"] == cls)
        under = [(pct, key) for pct, key in of_class if pct < floor]
        if not of_class:
            measured = "no such cell ran"
        elif under:
            measured = f"{len(under)} of {len(of_class)} under: " + ", ".join(f"{name(k)} {p:.1f}%" for p, k in under)
        else:
            measured = f"all {len(of_class)}; lowest {name(of_class[0][1])} {of_class[0][0]:.1f}%"
        rows.append((f"every {cls}-bound cell >= {floor:.0f}% of {roof}", measured, bool(of_class) and not under))

    for key, floor in HEADLINES:
        cell = cells.get(key)
        measured = f"{cell['copy_pct']:.1f}% ({cell['variant']}, {cell['kernel_ms']['median']:.4f} ms)" if cell else "not run"
        rows.append((f"{name(key)} >= {floor:.0f}% of copy", measured, bool(cell) and cell["copy_pct"] >= floor))

    if args.odd:
        odd_matrices, odd_cells = load([args.odd])
        matrices += odd_matrices
        ratios = sorted(((odd["kernel_ms"]["median"] / elements(odd)) / (cells[key]["kernel_ms"]["median"] / elements(cells[key])), key)
                        for key, odd in odd_cells.items() if key in cells)
        missing = [name(key) for key in odd_cells if key not in cells]
        over = [(r, k) for r, k in ratios if r > ODD_LIMIT]
        measured = (f"{len(ratios)} cells, {ratios[0][0]:.3f}-{ratios[-1][0]:.3f}x; the largest {name(ratios[-1][1])}"
                    if ratios else "no cell in both")
        if over:
            measured += "; over: " + ", ".join(f"{name(k)} {r:.3f}x" for r, k in over)
        if missing:
            measured += "; not at the round size: " + ", ".join(missing)
        rows.append((f"odd size within {ODD_LIMIT}x of the round size's time per element", measured, bool(ratios) and not over))

    if args.npp:
        round_images = {"cells": [c for c in cells.values() if c["op"] in ("conv2d", "transpose")]}
        npp_rows, skipped = npp_ratios(args.npp, round_images)
        behind = sorted((r[5], r[0]) for r in npp_rows if r[5] < NPP_LEAD)
        lowest = min(npp_rows, key=lambda r: r[5]) if npp_rows else None
        measured = (f"{len(npp_rows) - len(behind)} of {len(npp_rows)} cells; lowest {name(lowest[0])} {lowest[5]:.2f}x"
                    if lowest else "no cell verified")
        if behind:
            measured += "; under: " + ", ".join(f"{name(k)} {r:.2f}x" for r, k in behind)
        if skipped:
            measured += f"; {len(skipped)} left out: " + "; ".join(skipped)
        rows.append((f">= {NPP_LEAD}x NPP on every cell NPP has", measured, bool(npp_rows) and not behind))

    print("# The coverage matrix against its targets\n")
    for path, matrix in matrices:
        print(f"- {describe(path, matrix)}")
    print("\n| target | measured | met |\n|---|---|---|")
    for target, measured, met in rows:
        print(f"| {target} | {measured} | {'yes' if met else 'no'} |")
    print_grid(cells)
    return 0 if all(met for _, _, met in rows) else 1


def print_grid(cells):
    """The round cells as the README shows them: a row per conv2d kernel class, histogram and transpose,
    a column per depth and channel count, each cell's % of its class's roof, bold under the target."""
    present = {(c["depth"], int(c["channels"])) for c in cells.values() if c["op"] != "conv1d"}
    columns = [(depth, channels) for depth in ("u8", "u16", "f32") for channels in (1, 3, 4) if (depth, channels) in present]
    lines = []
    for cell in cells.values():
        line = (cell["op"], cell["case"]) if cell["op"] == "conv2d" else (cell["op"], "-")
        if cell["op"] != "conv1d" and line not in lines:
            lines.append(line)
    if not lines:
        return
    print("\n% of each cell's class roof (copy for memory-bound cells, F: FMA for compute-bound ones; bold: under its target):\n")
    print("| cell | " + " | ".join(f"{d} x{ch}" for d, ch in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for op, case in lines:
        row = []
        for depth, channels in columns:
            cell = cells.get((op, case, depth, channels))
            if not cell:
                row.append("")
                continue
            compute = cell["class"] == "compute"
            text = f"{cell['class_pct']:.1f}" + (" F" if compute else "")
            row.append(f"**{text}**" if cell["class_pct"] < (COMPUTE_BOUND_PCT if compute else MEMORY_BOUND_PCT) else text)
        print(f"| {op if case == '-' else case} | " + " | ".join(row) + " |")
    conv1d = sorted((c for c in cells.values() if c["op"] == "conv1d"), key=lambda c: int(c["case"].removeprefix("K=")))
    if conv1d:
        print()
    for cell in conv1d:
        roof = "FMA" if cell["class"] == "compute" else "copy"
        print(f"- conv1d {cell['case']} ({cell['variant']}): {cell['kernel_ms']['median']:.4f} ms, "
              f"{cell['class_pct']:.1f}% of {roof}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        raise
    except (OSError, ValueError, KeyError) as error:  # an unreadable or malformed file: bad input, not a target missed
        fail(f"bad input: {type(error).__name__}: {error}")
