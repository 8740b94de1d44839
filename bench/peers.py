#!/usr/bin/env python3
"""Time KernelLab's bench workloads on peer libraries and compare with KernelLab.

For the GPU machine (python3 with numpy, cupy/cupyx and torch for the GPU table, OpenCV-Python
for the CPU table; either half runs without the other's libraries):

    kernellab-cli bench --require-gpu --out-dir out --dump-inputs out/inputs
    python3 bench/peers.py --kernellab out/kernellab-bench.json

For every (op, size, depth) of the bench JSON the same input is loaded from the .npy files
`--dump-inputs` wrote (or, without them, generated in numpy with a fixed seed: same shape,
dtype and value range, different values) and run through:

  conv2d     cupyx.scipy.ndimage.correlate (border reflect101 <-> mode 'mirror'),
             torch conv2d on a reflect-padded input (torch's conv2d is a correlation)
  conv1d     cupyx.scipy.signal.convolve method='direct' and fftconvolve, torch conv1d
             with the taps flipped (a correlation again), all mode 'same'
  histogram  cupy.histogram, cupy.bincount, torch.bincount, torch.histc
  transpose  cupy.ascontiguousarray(a.T), torch .t().contiguous()

and compared with KernelLab's best GPU kernel. Separately, every cpu-opencv row is compared with
the OpenCV-Python call a user would write for it, into a reused output (dst=):

  conv2d     cv2.GaussianBlur for OpenCV's sigma-0 Gaussians (u8/u16: up to 7x7), else cv2.filter2D
  conv1d     cv2.filter2D over the zero-padded signal with the taps reversed, anchor (0, 0)
  histogram  cv2.calcHist per channel
  transpose  cv2.transpose

Each peer is first checked against KernelLab's semantics on a small case computed in numpy
(float64 loops straight from the definitions); one that disagrees is reported and not timed.
GPU times are CUDA-event medians on device-resident data (warm-up first), like KernelLab's
kernel-only time; the table gives peer / KernelLab ratios (> 1: KernelLab is faster).
TF32 is off for torch so that its convolutions are float32 like KernelLab's. cv2 times are
wall-clock medians against cpu-opencv's end-to-end median (cv2 / KernelLab > 1: KernelLab is faster).
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

# OpenCV's border names -> scipy.ndimage modes (scipy 'mirror' is d c b | a b c d | c b a).
NDIMAGE_MODE = {
    "reflect101": "mirror",
    "reflect": "reflect",
    "replicate": "nearest",
    "constant": "constant",
    "wrap": "wrap",
}
# ... and -> numpy.pad modes, for the numpy reference.
NUMPY_PAD_MODE = {
    "reflect101": "reflect",
    "reflect": "symmetric",
    "replicate": "edge",
    "constant": "constant",
    "wrap": "wrap",
}
NUMPY_DTYPE = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32}
SEED = 20240601


def optional_import(name):
    try:
        return __import__(name)
    except ImportError as error:
        print(f"note: {name} is not available ({error}); its peers are skipped", file=sys.stderr)
        return None


cp = optional_import("cupy")
torch = optional_import("torch")
cv2 = optional_import("cv2")
if cp is not None:
    import cupyx.scipy.ndimage as cnd
    import cupyx.scipy.signal as csig
if torch is not None:
    import torch.nn.functional as F

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


# ---- the kernels KernelLab's bench uses (when no dumped kernel file is given) -------------

OPENCV_SMALL_GAUSSIANS = {
    1: [1.0],
    3: [0.25, 0.5, 0.25],
    5: [0.0625, 0.25, 0.375, 0.25, 0.0625],
    7: [0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125],
}


def gaussian_kernel_2d(size):
    """cv::getGaussianKernel(size, 0) as an outer product, like KernelLab's gaussian preset."""
    if size in OPENCV_SMALL_GAUSSIANS:
        g = np.array(OPENCV_SMALL_GAUSSIANS[size])
    else:
        sigma = 0.3 * ((size - 1) * 0.5 - 1) + 0.8
        t = np.arange(size) - (size - 1) / 2
        g = np.exp(-(t * t) / (2 * sigma * sigma))
        g /= g.sum()
    return np.outer(g, g).astype(np.float32)


def low_pass_taps(taps, cutoff_hz, rate):
    """KernelLab's low-pass preset: windowed sinc (Hamming), DC gain 1."""
    cutoff = cutoff_hz / rate
    n = np.arange(taps)
    t = n - (taps - 1) / 2
    sinc = np.where(t == 0, 2 * cutoff, np.sin(2 * np.pi * cutoff * t) / (np.pi * np.where(t == 0, 1, t)))
    window = 0.54 - 0.46 * np.cos(2 * np.pi * n / (taps - 1)) if taps > 1 else np.ones(1)
    h = sinc * window
    return (h / h.sum()).astype(np.float32)


# ---- numpy references (KernelLab's semantics, float64) -------------------------------------


def reference_conv2d(image, kernel, border):
    """out(y, x) = sum K(i, j) in(y + i - ay, x + j - ax): a correlation, anchor at the centre."""
    kh, kw = kernel.shape
    ry, rx = kh // 2, kw // 2
    padded = np.pad(image.astype(np.float64), ((ry, ry), (rx, rx)), mode=NUMPY_PAD_MODE[border])
    out = np.zeros(image.shape, dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            out += kernel[i, j] * padded[i : i + image.shape[0], j : j + image.shape[1]]
    return out


def reference_conv1d_same(x, taps):
    return np.convolve(x.astype(np.float64), taps.astype(np.float64), mode="same")


def reference_histogram(values, bins, lo, hi):
    """bin = floor(v * a + b), a = bins / (hi - lo), b = -lo * a, for lo <= v < hi (histogram.hpp)."""
    v = values.astype(np.float64).ravel()
    v = v[(v >= lo) & (v < hi)]
    a = bins / (hi - lo)
    index = np.clip(np.floor(v * a + (-lo * a)), 0, bins - 1).astype(np.int64)
    return np.bincount(index, minlength=bins)


# ---- inputs -------------------------------------------------------------------------------


def bench_input(row, inputs_dir):
    """The row's input from the dumped .npy, else generated with the same shape and range."""
    if inputs_dir and row.get("input_file"):
        path = os.path.join(inputs_dir, row["input_file"])
        if os.path.exists(path):
            return np.load(path)
    rng = np.random.default_rng(SEED)
    if row["op"] == "conv1d":
        shape = (row["frames"],) if row["channels"] == 1 else (row["frames"], row["channels"])
        return rng.uniform(-1, 1, size=shape).astype(np.float32)
    shape = (row["height"], row["width"]) + ((row["channels"],) if row["channels"] > 1 else ())
    dtype = NUMPY_DTYPE[row["depth"]]
    if dtype == np.float32:
        return rng.random(shape, dtype=np.float32)
    return rng.integers(0, np.iinfo(dtype).max + 1, size=shape, dtype=dtype)


def bench_kernel(op, row, parameters, inputs_dir):
    if inputs_dir and row.get("kernel_file"):
        path = os.path.join(inputs_dir, row["kernel_file"])
        if os.path.exists(path):
            return np.load(path).astype(np.float32)
    if op == "conv2d":
        return gaussian_kernel_2d(parameters["conv2d"]["size"])
    conv1d = parameters["conv1d"]
    return low_pass_taps(conv1d["taps"], conv1d["cutoff_hz"], parameters["signal_rate"])


# ---- peers: name -> function(device array[, kernel]) returning a device array ---------------


def peers_for(op, depth, parameters):
    """[(name, library, make)] where make(x_host, kernel) returns a zero-argument callable to time
    and a function giving its result on the host."""
    border = parameters["conv2d"]["border"]
    bins = parameters["histogram"]["bins"]
    peers = []

    if cp is not None:
        if op == "conv2d":

            def cupy_correlate(x, k):
                xd, kd = cp.asarray(x), cp.asarray(k)
                return lambda: cnd.correlate(xd, kd, mode=NDIMAGE_MODE[border], output=cp.float32)

            peers.append(("cupyx.ndimage.correlate", "cupy", cupy_correlate))
        elif op == "conv1d":

            def cupy_direct(x, k):
                xd, kd = cp.asarray(x), cp.asarray(k)
                return lambda: csig.convolve(xd, kd, mode="same", method="direct")

            def cupy_fft(x, k):
                xd, kd = cp.asarray(x), cp.asarray(k)
                return lambda: csig.fftconvolve(xd, kd, mode="same")

            peers += [("cupyx.signal.convolve direct", "cupy", cupy_direct), ("cupyx.signal.fftconvolve", "cupy", cupy_fft)]
        elif op == "histogram":

            def cupy_histogram(x, _):
                xd = cp.asarray(x)
                if depth == "f32":  # KernelLab's default f32 range: the data's [min, max]
                    return lambda: cp.histogram(xd, bins=bins, range=(float(xd.min()), float(xd.max())))[0]
                hi = 256 if depth == "u8" else 65536
                return lambda: cp.histogram(xd, bins=bins if depth == "u16" else 256, range=(0, hi))[0]

            peers.append(("cupy.histogram", "cupy", cupy_histogram))
            if depth == "u8" or (depth == "u16" and bins & (bins - 1) == 0):

                def cupy_bincount(x, _):
                    xd = cp.asarray(x).ravel()
                    shift = 0 if depth == "u8" else 16 - int(math.log2(bins))
                    return lambda: cp.bincount(xd >> shift if shift else xd, minlength=256 if depth == "u8" else bins)

                peers.append(("cupy.bincount", "cupy", cupy_bincount))
        elif op == "transpose":

            def cupy_transpose(x, _):
                xd = cp.asarray(x)
                axes = (1, 0, 2) if xd.ndim == 3 else (1, 0)
                return lambda: cp.ascontiguousarray(xd.transpose(axes))

            peers.append(("cupy.ascontiguousarray(a.T)", "cupy", cupy_transpose))

    if torch is not None:
        device = torch.device("cuda")

        def to_torch(x):
            # torch has no uint16 arithmetic: u16 data goes as int32 (same values).
            return torch.from_numpy(x.astype(np.int32) if x.dtype == np.uint16 else x).to(device)

        if op == "conv2d":

            def torch_conv2d(x, k):
                xd = to_torch(x)[None, None]
                kd = torch.from_numpy(k).to(device)[None, None]
                ry, rx = k.shape[0] // 2, k.shape[1] // 2
                torch_mode = {"reflect101": "reflect", "replicate": "replicate", "wrap": "circular", "constant": "constant"}
                if border not in torch_mode:
                    return None
                # The u8/u16 -> float conversion is part of the work: KernelLab reads integers directly.
                return lambda: F.conv2d(F.pad(xd.float(), (rx, rx, ry, ry), mode=torch_mode[border]), kd)[0, 0]

            peers.append(("torch conv2d (cudnn)", "torch", torch_conv2d))
        elif op == "conv1d":

            def torch_conv1d(x, k):
                if len(k) % 2 == 0:
                    return None  # padding (M-1)/2 on both sides gives numpy's 'same' only for odd M
                xd = to_torch(x)[None, None]
                kd = torch.from_numpy(k[::-1].copy()).to(device)[None, None]
                return lambda: F.conv1d(xd, kd, padding=(len(k) - 1) // 2)[0, 0]

            peers.append(("torch conv1d (cudnn)", "torch", torch_conv1d))
        elif op == "histogram":
            if depth == "u8" or (depth == "u16" and bins & (bins - 1) == 0):

                def torch_bincount(x, _):
                    xd = to_torch(x).flatten().long()
                    shift = 0 if depth == "u8" else 16 - int(math.log2(bins))
                    return lambda: torch.bincount(xd >> shift if shift else xd, minlength=256 if depth == "u8" else bins)

                peers.append(("torch.bincount", "torch", torch_bincount))

            def torch_histc(x, _):
                xd = to_torch(x).float()
                if depth == "f32":
                    return lambda: torch.histc(xd, bins=bins, min=float(xd.min()), max=float(xd.max()))
                # histc's range is closed, but no integer reaches 256 / 65536: the bins match [0, hi).
                hi = 256.0 if depth == "u8" else 65536.0
                return lambda: torch.histc(xd, bins=256 if depth == "u8" else bins, min=0.0, max=hi)

            peers.append(("torch.histc", "torch", torch_histc))
        elif op == "transpose":

            def torch_transpose(x, _):
                xd = torch.from_numpy(x.astype(np.int32) if x.dtype == np.uint16 else x).to(device)
                return lambda: (xd.permute(1, 0, 2) if xd.dim() == 3 else xd.t()).contiguous()

            peers.append(("torch .t().contiguous()", "torch", torch_transpose))
    return peers


def histogram_range(x, depth):
    """KernelLab's default [lo, hi): the depth's range, or for f32 the data's [min, max] with max
    nudged up one ulp so that it lands in the last bin."""
    if depth == "f32":
        return float(x.min()), float(np.nextafter(x.max(), np.float32(np.inf)))
    return 0.0, 256.0 if depth == "u8" else 65536.0


def cv2_call(op, depth, parameters, kernel):
    """(name, make) for the OpenCV-Python call of a cpu-opencv case; make is None when cv2 has none.
    make(x_host, kernel) returns (run, result): run, to time, writes into an output allocated once;
    result gives that output in KernelLab's layout, outside the timing."""
    border = parameters["conv2d"]["border"]
    if op == "conv2d":
        cv_border = {"reflect101": cv2.BORDER_REFLECT_101, "reflect": cv2.BORDER_REFLECT,
                     "replicate": cv2.BORDER_REPLICATE, "constant": cv2.BORDER_CONSTANT}.get(border)
        size = kernel.shape[0]
        # GaussianBlur (what a user calls for a Gaussian) where it computes this kernel: any size in
        # f32; for u8/u16 its fixed point holds only the 3, 5 and 7 tables exactly.
        is_small_gaussian = (kernel.shape == (size, size) and (depth == "f32" or size in OPENCV_SMALL_GAUSSIANS)
                             and np.allclose(kernel, gaussian_kernel_2d(size), rtol=0, atol=1e-7))
        name = "cv2.GaussianBlur" if is_small_gaussian else "cv2.filter2D"
        if cv_border is None:
            return name, None

        # ddepth -1: the input's depth, which is KernelLab's output depth in the bench.
        def make(x, k):
            out = np.empty_like(x)
            if is_small_gaussian:  # GaussianBlur's separable (fixed-point for u8) path for this kernel
                return (lambda: cv2.GaussianBlur(x, (size, size), 0, dst=out, borderType=cv_border)), lambda: out
            return (lambda: cv2.filter2D(x, -1, k, dst=out, borderType=cv_border)), lambda: out

        return name, make
    if op == "conv1d":

        def make(x, taps):
            # 'same' = correlation with the reversed taps over the signal zero-padded by K // 2 in
            # front (and the rest behind); one row per channel, so one call does every channel.
            frames, k = x.shape[0], len(taps)
            rows = x.reshape(frames, -1).T
            padded = np.zeros((rows.shape[0], frames + k - 1), np.float32)
            padded[:, k // 2 : k // 2 + frames] = rows
            reversed_taps = np.ascontiguousarray(taps[::-1], dtype=np.float32).reshape(1, k)
            out = np.empty_like(padded)
            run = lambda: cv2.filter2D(padded, -1, reversed_taps, dst=out, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
            return run, lambda: out[:, :frames].T.reshape(x.shape)

        return "cv2.filter2D (padded row)", make
    if op == "histogram":
        bins = 256 if depth == "u8" else parameters["histogram"]["bins"]

        def make(x, _):
            channels = x.shape[2] if x.ndim == 3 else 1
            lo, hi = histogram_range(x, depth)
            hists = [np.zeros((bins, 1), np.float32) for _ in range(channels)]
            run = lambda: [cv2.calcHist([x], [c], None, [bins], [lo, hi], hist=h) for c, h in enumerate(hists)]
            return run, lambda: np.concatenate([h.ravel() for h in hists])

        return "cv2.calcHist per channel", make

    def make(x, _):
        out = np.empty((x.shape[1], x.shape[0]) + x.shape[2:], x.dtype)
        return (lambda: cv2.transpose(x, dst=out)), lambda: out

    return "cv2.transpose", make


# ---- running ---------------------------------------------------------------------------------


def to_host(result):
    if cp is not None and isinstance(result, cp.ndarray):
        return cp.asnumpy(result)
    if torch is not None and isinstance(result, torch.Tensor):
        return result.cpu().numpy()
    return np.asarray(result)


def synchronize(library):
    if library == "cupy":
        cp.cuda.Device().synchronize()
    elif library == "torch":
        torch.cuda.synchronize()


def time_ms(library, fn, warmup, repetitions):
    """Median of `repetitions` timed calls: CUDA events for GPU libraries, wall clock for cv2."""
    for _ in range(warmup):
        fn()
    synchronize(library)
    samples = []
    for _ in range(repetitions):
        if library == "cupy":
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(cp.cuda.get_elapsed_time(start, stop))
        elif library == "torch":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(start.elapsed_time(stop))
        else:
            begin = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(samples)


def small_case(op, depth, channels, parameters):
    """(input, kernel, KernelLab's float64 result) for a small case computed in numpy; channels are
    interleaved (the last axis), histograms concatenated per channel."""
    rng = np.random.default_rng(7)
    dtype = NUMPY_DTYPE[depth]
    channel_axis = (channels,) if channels > 1 else ()
    if op == "conv1d":
        x = rng.uniform(-1, 1, (1001,) + channel_axis).astype(np.float32)
    elif dtype == np.float32:
        x = rng.random((37, 29) + channel_axis, dtype=np.float32)
    else:
        x = rng.integers(0, np.iinfo(dtype).max + 1, size=(37, 29) + channel_axis, dtype=dtype)
    planes = [x] if channels == 1 else [x[..., c] for c in range(channels)]
    kernel = None
    if op == "conv2d":
        kernel = gaussian_kernel_2d(parameters["conv2d"]["size"])
        want = np.stack([reference_conv2d(p, kernel, parameters["conv2d"]["border"]) for p in planes], axis=-1)
    elif op == "conv1d":
        kernel = low_pass_taps(31, 0.1, 1.0)
        want = np.stack([reference_conv1d_same(p, kernel) for p in planes], axis=-1)
    elif op == "histogram":
        bins = 256 if depth == "u8" else parameters["histogram"]["bins"]
        lo, hi = histogram_range(x, depth)
        want = np.concatenate([reference_histogram(p, bins, lo, hi) for p in planes])
    else:
        want = np.swapaxes(x, 0, 1)
    return x, kernel, want.reshape(x.shape) if op in ("conv2d", "conv1d") else want


def disagreement(op, got, want, max_abs=None):
    """None when got agrees with want: exactly for histogram and transpose, within max_abs when
    given, else to 1e-5 of want's largest magnitude."""
    if got.shape != want.shape:
        return f"gives shape {got.shape}, KernelLab {want.shape}"
    difference = float(np.abs(got.astype(np.float64) - want).max())
    if op in ("histogram", "transpose") or max_abs is not None:
        allowed = max_abs or 0
        return None if difference <= allowed else f"differs from KernelLab's {op} (max |diff| {difference}, allowed {allowed})"
    error = difference / max(float(np.abs(want).max()), 1e-30)
    return None if error <= 1e-5 else f"relative error {error:.2e} against KernelLab's definition (allowed 1e-5)"


def semantics_problem(op, depth, make, parameters, library):
    """Runs the GPU peer on a small case and compares it with the numpy reference; None when it agrees."""
    x, kernel, want = small_case(op, depth, 1, parameters)
    fn = make(x, kernel)
    if fn is None:
        return "does not support these parameters"
    got = to_host(fn()).reshape(want.shape) if op != "histogram" else to_host(fn()).ravel()
    synchronize(library)
    return disagreement(op, got, want)


def cv2_semantics_problem(op, depth, channels, make, parameters):
    """The same check for an OpenCV-Python call, with the bench row's channel count."""
    x, kernel, want = small_case(op, depth, channels, parameters)
    run, result = make(x, kernel)
    run()
    if op == "conv2d" and depth != "f32":
        # Integer outputs are rounded and saturated; OpenCV's fixed-point Gaussian may be one off.
        return disagreement(op, result(), np.clip(np.rint(want), 0, np.iinfo(NUMPY_DTYPE[depth]).max), max_abs=1)
    return disagreement(op, result(), want)


def gpu_table(bench, parameters, inputs_dir, ops, args):
    """Markdown lines: every GPU peer against KernelLab's best verified kernel-only time per case."""
    # KernelLab's best verified kernel-only time per (op, size, depth), over its variants.
    best = {}
    for row in bench["rows"]:
        if row["backend"] != "gpu" or not row["ok"] or not row.get("kernel_ms") or row["op"] not in ops:
            continue
        key = (row["op"], row["size"], row["depth"])
        ms = row["kernel_ms"]["median"]
        if key not in best or ms < best[key][0]:
            best[key] = (ms, row["variant"], row)
    if not best:
        print("note: the bench JSON has no successful GPU rows (was it run on a GPU machine?)", file=sys.stderr)
        return []

    lines = ["| op | size | depth | peer | peer ms | KernelLab ms (variant) | peer / KernelLab |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    checked = {}
    for (op, size, depth), (kl_ms, variant, row) in sorted(best.items()):
        if row["channels"] != 1 and op != "transpose":
            print(f"note: {op} {size} has {row['channels']} channels; the peers here take one", file=sys.stderr)
            continue
        x = bench_input(row, inputs_dir)
        kernel = bench_kernel(op, row, parameters, inputs_dir) if op in ("conv2d", "conv1d") else None
        for name, library, make in peers_for(op, depth, parameters):
            if (name, depth) not in checked:
                checked[(name, depth)] = semantics_problem(op, depth, make, parameters, library)
            problem = checked[(name, depth)]
            if problem:
                lines.append(f"| {op} | {size} | {depth} | {name} | not timed: {problem} | {kl_ms:.4f} ({variant}) | - |")
                continue
            fn = make(x, kernel)
            peer_ms = time_ms(library, fn, args.warmup, args.repetitions)
            lines.append(f"| {op} | {size} | {depth} | {name} | {peer_ms:.4f} | {kl_ms:.4f} ({variant}) | {peer_ms / kl_ms:.2f} |")
            del fn
            if cp is not None:
                cp.get_default_memory_pool().free_all_blocks()
            if torch is not None:
                torch.cuda.empty_cache()
    return lines


def cpu_table(bench, parameters, inputs_dir, ops, args):
    """Markdown lines: every successful cpu-opencv row against the OpenCV-Python call for its case."""
    bench_threads = bench.get("cpu_threads", bench.get("environment", {}).get("cpu_threads"))
    lines = ["| op | size | depth | channels | OpenCV-Python call | cv2 threads | cv2 ms | "
             "KernelLab cpu-opencv ms (threads) | cv2 / KernelLab |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    checked = {}
    for row in bench["rows"]:
        if row["backend"] != "cpu-opencv" or not row["ok"] or not row.get("end_to_end_ms") or row["op"] not in ops:
            continue
        op, depth, channels = row["op"], row["depth"], row["channels"]
        kernel = bench_kernel(op, row, parameters, inputs_dir) if op in ("conv2d", "conv1d") else None
        name, make = cv2_call(op, depth, parameters, kernel)
        kl_ms = row["end_to_end_ms"]["median"]
        kl_text = f"{kl_ms:.4f} ({row.get('cpu_threads', bench_threads) or '?'})"
        case = f"| {op} | {row['size']} | {depth} | {channels} | {name} | {cv2.getNumThreads()} |"
        key = (op, depth, channels, name)
        if key not in checked:
            checked[key] = (cv2_semantics_problem(op, depth, channels, make, parameters) if make
                            else "does not support these parameters")
        if checked[key]:
            lines.append(f"{case} not timed: {checked[key]} | {kl_text} | - |")
            continue
        run, _ = make(bench_input(row, inputs_dir), kernel)
        cv2_ms = time_ms("cv2", run, args.warmup, args.repetitions)
        lines.append(f"{case} {cv2_ms:.4f} | {kl_text} | {cv2_ms / kl_ms:.2f} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernellab", required=True, help="kernellab-bench.json from `kernellab-cli bench`")
    parser.add_argument("--inputs", help="the --dump-inputs directory (default: the one the JSON names)")
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--ops", default="conv2d,conv1d,histogram,transpose")
    parser.add_argument("--out", help="also write the Markdown tables here")
    parser.add_argument("--cpu-out", help="write the CPU table here instead of after the GPU table in --out")
    args = parser.parse_args()

    with open(args.kernellab) as f:
        bench = json.load(f)
    if bench.get("schema") != "kernellab-bench":
        sys.exit(f"{args.kernellab}: not a kernellab-bench JSON")
    if cp is None and torch is None and cv2 is None:
        sys.exit("none of cupy, torch and cv2 is importable: no peers to run")
    parameters = bench["parameters"]
    inputs_dir = args.inputs or bench.get("inputs_dir")
    if not inputs_dir:
        print("note: no --dump-inputs directory; inputs are generated in numpy (same shape and range, other values)",
              file=sys.stderr)
    ops = args.ops.split(",")

    gpu_lines = gpu_table(bench, parameters, inputs_dir, ops, args) if cp is not None or torch is not None else []
    cpu_lines = cpu_table(bench, parameters, inputs_dir, ops, args) if cv2 is not None else []
    if len(cpu_lines) == 2:
        print("note: the bench JSON has no successful cpu-opencv rows", file=sys.stderr)
        cpu_lines = []
    if not gpu_lines and not cpu_lines:
        sys.exit("nothing to compare: no GPU peer with GPU rows, no cv2 with cpu-opencv rows")
    gpu_text = "\n".join(gpu_lines)
    cpu_text = "\n".join(["OpenCV-Python on the CPU against KernelLab's cpu-opencv (medians, wall clock):", ""] + cpu_lines)
    print("\n\n".join(text for text, lines in ((gpu_text, gpu_lines), (cpu_text, cpu_lines)) if lines))
    parts = ([gpu_text] if gpu_lines else []) + ([cpu_text] if cpu_lines and not args.cpu_out else [])
    if args.out and parts:
        with open(args.out, "w") as f:
            f.write("\n\n".join(parts) + "\n")
    if args.cpu_out and cpu_lines:
        with open(args.cpu_out, "w") as f:
            f.write(cpu_text + "\n")


if __name__ == "__main__":
    main()
