#!/usr/bin/env bash
# The coverage matrix and its targets in one go, on a GPU machine, from the build tree:
#   bash ../bench/coverage-matrix.sh OUT
# OUT/round-images: conv2d and transpose at 8192x8192 (replicate border, NPP's only one);
# OUT/round-signals: histogram at 8192x8192 and conv1d on 16M samples; OUT/odd: every op at
# 8191x8179 and 16777213 samples; OUT/npp.csv: NPP 13 on every cell it has, each checked first on a
# 1021x767 matrix's inputs (needs nvcc and NPP); OUT/npp-vs-kernellab.md the join; OUT/targets.md:
# bench/matrix_targets.py's table and grid. ROUND=0, ODD=0 and NPP=0 leave those steps out, so that the
# runs fit calls of 10 minutes: `ODD=0 ... OUT1`, then `ROUND=0 NPP=0 ... OUT2` (on an H200 the conv2d and
# transpose matrix alone took 238 s, the odd size 204 s on an H100); matrix_targets.py then reads both
# folders' files. Without the round matrices there is no table. Exits 1 when a step failed or a target
# is not met, 2 for ROUND=0 without NPP=0.
set -uo pipefail
out=${1:?usage: coverage-matrix.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
cli=${KERNELLAB_CLI:-app/kernellab-cli}
matrix=(bench --matrix --repetitions 10 --warmup 2)
status=0
round=${ROUND:-1}
if [ "${NPP:-1}" = 1 ] && [ "$round" != 1 ]; then
    echo "coverage-matrix.sh: NPP's times are joined to the round conv2d matrix: ROUND=0 needs NPP=0" >&2
    exit 2
fi

mkdir -p "$out"
"$cli" info > "$out/info.txt" || status=1
if [ "$round" = 1 ]; then
    "$cli" "${matrix[@]}" --ops conv2d,transpose --border replicate --out-dir "$out/round-images" || status=1
    "$cli" "${matrix[@]}" --ops histogram,conv1d --out-dir "$out/round-signals" || status=1
fi
odd=()
if [ "${ODD:-1}" = 1 ]; then
    "$cli" "${matrix[@]}" --sizes 8191x8179 --frames 16777213 --border replicate --out-dir "$out/odd" || status=1
    odd=(--odd "$out/odd/kernellab-matrix.json")
fi

npp=()
if [ "${NPP:-1}" = 1 ]; then
    if nvcc -O2 -std=c++17 "$here/npp_peer.cu" -lnppif -lnppist -lnppidei -lnppc -o "$out/npp_peer" &&
        "$cli" "${matrix[@]}" --ops conv2d,transpose --border replicate --sizes 1021x767 --repetitions 1 --warmup 0 \
            --out-dir "$out/npp-check" --dump-inputs "$out/npp-inputs" > /dev/null &&
        "$out/npp_peer" "$out/npp-inputs" > "$out/npp.csv" &&
        python3 "$here/npp_compare.py" "$out/npp.csv" "$out/round-images/kernellab-matrix.json" > "$out/npp-vs-kernellab.md"; then
        npp=(--npp "$out/npp.csv")
    else
        status=1
    fi
    rm -rf "$out/npp-inputs"
fi

if [ "$round" = 1 ]; then
    python3 "$here/matrix_targets.py" --round "$out/round-images/kernellab-matrix.json" \
        "$out/round-signals/kernellab-matrix.json" "${odd[@]}" "${npp[@]}" > "$out/targets.md" ||
        status=1
    cat "$out/targets.md"
fi
exit $status
