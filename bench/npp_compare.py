#!/usr/bin/env python3
"""NPP against KernelLab, cell by cell: npp_peer's CSV joined with a coverage matrix's JSON.

    bench/npp_compare.py npp.csv kernellab-matrix.json > npp-vs-kernellab.md

Both should come from the same machine and size, the matrix run with --border replicate (the
only border NPP's filters have). A ratio above 1 means KernelLab is faster.
"""
import csv
import json
import sys


def npp_ratios(npp_path, matrix):
    """(rows, skipped): a row (key, NPP function, NPP ms, KernelLab ms, variant, NPP / KernelLab) for each
    verified NPP cell the matrix has, key = (op, case, depth, channels); why each other cell is left out."""
    ours = {}
    for cell in matrix["cells"]:
        if cell["ok"]:
            ours[(cell["op"], cell["case"], cell["depth"], int(cell["channels"]))] = cell
    rows, skipped = [], []
    for r in csv.DictReader(open(npp_path)):
        key = (r["op"], r["case"], r["depth"], int(r["channels"]))
        if r["verified"] != "true":
            skipped.append(f"{' '.join(map(str, key))}: {r['npp_function']} differs from KernelLab by {r['max_diff']}")
            continue
        if key not in ours:
            skipped.append(f"{' '.join(map(str, key))}: not in the matrix")
            continue
        npp_ms, kl_ms = float(r["median_ms"]), ours[key]["kernel_ms"]["median"]
        rows.append((key, r["npp_function"], npp_ms, kl_ms, ours[key]["variant"], npp_ms / kl_ms))
    return rows, skipped


def main(npp_path, matrix_path):
    matrix = json.load(open(matrix_path))
    rows, skipped = npp_ratios(npp_path, matrix)
    print(f"# NPP against KernelLab, {matrix['date']}\n")
    print(f"{matrix['device']['name']}, kernel only, medians; KernelLab: `bench --matrix --border replicate`, "
          "NPP: `bench/npp_peer.cu` (every cell verified against KernelLab's output first). "
          "NPP / KernelLab > 1: KernelLab is faster.\n")
    print("| op | case | depth | ch | NPP function | NPP ms | KernelLab ms | variant | NPP / KernelLab |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, fn, npp_ms, kl_ms, variant, ratio in rows:
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fn} | {npp_ms:.4f} | {kl_ms:.4f} | {variant} | {ratio:.2f}x |")
    if rows:
        worst = min(rows, key=lambda r: r[5])
        below = [r for r in rows if r[5] < 1.2]
        print(f"\n{len(rows)} cells; lowest: {' '.join(map(str, worst[0]))} at {worst[5]:.2f}x; "
              f"{len(below)} below 1.2x: " + (", ".join(f"{' '.join(map(str, r[0]))} {r[5]:.2f}x" for r in below) or "none") + ".")
    for s in skipped:
        print(f"\n- left out: {s}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
