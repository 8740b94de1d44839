#!/usr/bin/env bash
# The benchmark runs behind README "Performance" (the issue's target workloads), on a GPU
# machine, from the build tree:   bash bench/h200-performance.sh OUT_DIR [INPUTS_DIR]
# Writes OUT_DIR/<case>/kernellab-bench.{json,csv,md}; inputs are dumped as .npy into
# INPUTS_DIR (default /tmp/kernellab-inputs) for bench/peers.py. The bare OpenCV calls that
# cpu-opencv is held to go to OUT_DIR/opencv-bare{,-odd}.{json,md}. CPU_ONLY=1 times only the
# CPU side (cpu-opencv, its OpenCV-Python peers and the bare calls), with the colour and u16
# histogram and transpose cases besides; it needs no GPU.
set -uo pipefail
out=${1:?usage: h200-performance.sh OUT_DIR [INPUTS_DIR]}
inputs=${2:-/tmp/kernellab-inputs}
here=$(cd "$(dirname "$0")" && pwd)
cli=${KERNELLAB_CLI:-app/kernellab-cli}
opencv_bare=${KERNELLAB_OPENCV_BARE:-bench/kernellab-opencv-bare}
common=(--require-gpu --quiet --sizes 8192 --memory pinned --streams 1,4 --repetitions 20 --cpu-repetitions 10)
cpu_only=${CPU_ONLY:-0}
peer_args=()
if [ "$cpu_only" = 1 ]; then  # the slow cv2 histograms of colour images: 10 repetitions, not 20
    common=(--quiet --sizes 8192 --backends cpu-opencv --cpu-repetitions 10)
    peer_args=(--repetitions 10)
fi
status=0

bench() {  # bench CASE ARGS...
    local name=$1
    shift
    echo "=== $name"
    "$cli" bench "${common[@]}" --out-dir "$out/$name" --dump-inputs "$inputs/$name" "$@" || status=1
}

mkdir -p "$out"
"$cli" info > "$out/info.txt" || status=1
bench transpose-histogram --ops transpose,histogram --depths u8,f32
# Every pixel in one bin: the histogram's worst case for atomics (target: <= 2x the noise input).
bench histogram-u8-constant --ops histogram --depths u8 --pattern constant
for k in 3 5 9 15; do bench "conv2d-f32-k$k" --ops conv2d --depths f32 --ksize "$k"; done
bench conv2d-u8x3-k5 --ops conv2d --depths u8 --channels 3 --ksize 5
for t in 15 127 1023 8191; do bench "conv1d-k$t" --ops conv1d --frames 16M --taps "$t"; done
# Odd sizes (rows not 4-element aligned), kernel speed per element against the round sizes above.
odd=(--sizes 8191x8179 --streams 1 --variants auto)
bench odd-transpose-histogram --ops transpose,histogram --depths u8,f32 "${odd[@]}"
for k in 3 5 15; do bench "odd-conv2d-f32-k$k" --ops conv2d --depths f32 --ksize "$k" "${odd[@]}"; done
bench odd-conv2d-u8x3-k5 --ops conv2d --depths u8 --channels 3 --ksize 5 "${odd[@]}"
bench odd-conv1d-k15 --ops conv1d --frames 16777213 --taps 15 --streams 1 --variants auto
if [ "$cpu_only" = 1 ]; then
    bench colour-u16 --ops histogram,transpose --depths u16
    for c in 3 4; do bench "colour-ch$c" --ops histogram,transpose --depths u8,u16,f32 --channels "$c"; done
fi
# cpu-opencv on 1, 2, 4 ... all threads, each against the host memory bandwidth on as many threads.
echo "=== cpu-thread-scaling"
"$cli" bench --quiet --sizes 8192 --backends cpu-opencv --ops conv2d,histogram,transpose,conv1d --depths u8,f32 \
    --thread-scaling --cpu-repetitions 10 --out-dir "$out/cpu-thread-scaling" || status=1

if [ "${RUN_PEERS:-1}" = 1 ]; then
    for json in "$out"/*/kernellab-bench.json; do
        echo "=== peers: $json"
        python3 "$here/peers.py" --kernellab "$json" --out "$(dirname "$json")/peers.md" "${peer_args[@]}" || status=1
    done
fi

if [ "${RUN_BARE:-1}" = 1 ]; then
    echo "=== opencv-bare"
    "$opencv_bare" --size 8192 --json "$out/opencv-bare.json" > "$out/opencv-bare.md" || status=1
    echo "=== opencv-bare-odd"
    "$opencv_bare" --size 8191x8179 --json "$out/opencv-bare-odd.json" > "$out/opencv-bare-odd.md" || status=1
fi
exit $status
