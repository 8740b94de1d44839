#!/usr/bin/env bash
# Installs what KernelLab needs on Debian 12 and checks for the CUDA toolkit.
# Safe to run again: packages already installed are skipped, and apt-get is not run
# at all when nothing is missing.
#
# Usage:
#   scripts/setup-debian.sh [--fuzzing]     (--fuzzing: also clang and its libFuzzer runtime,
#                                             for scripts/fuzz.sh; .ci/run uses it)
#   scripts/setup-debian.sh --list          (prints the packages, one per line, and exits;
#                                             tests/setup checks them against what CMake links)
#   cmake --preset release
#   cmake --build --preset release
set -euo pipefail

# Qt 6 Charts needs the OpenGL module, which Debian ships separately. OpenCV: only the three
# modules KernelLab links; libopencv-dev would add every other module and about 250 packages
# (VTK, GDAL, HDF5 ...: cmake/FindOpenCVModules.cmake finds the three without it).
packages=(cmake ninja-build g++ pkg-config qt6-base-dev qt6-charts-dev libqt6opengl6-dev
          libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev libsndfile1-dev)
nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"  # CMake honours CUDACXX too
list=0
for argument in "$@"; do
  case "$argument" in
    --fuzzing) packages+=(clang libclang-rt-14-dev) ;;
    --list) list=1 ;;
    *) echo "error: unknown option '$argument' (usage: $0 [--fuzzing] [--list])" >&2; exit 2 ;;
  esac
done

if ((list)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

if ! command -v dpkg-query >/dev/null; then
  echo "error: dpkg-query not found; this script is for Debian 12. Install the equivalents of: ${packages[*]}" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "Debian packages: all installed (${packages[*]})"
else
  if ((EUID == 0)); then
    as_root=()
  elif command -v sudo >/dev/null; then
    # Without a terminal (CI) sudo must fail rather than wait for a password.
    if [[ -t 0 ]]; then as_root=(sudo); else as_root=(sudo -n); fi
  else
    echo "error: installing ${missing[*]} needs root; run this script as root or install sudo" >&2
    exit 1
  fi
  echo "Installing missing Debian packages: ${missing[*]}"
  "${as_root[@]}" apt-get update
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [[ ! -x "$nvcc" ]]; then
  cat >&2 <<MESSAGE
error: $nvcc not found. KernelLab needs the CUDA toolkit (12 or newer) to build, even on
machines without a GPU. Install it from NVIDIA's Debian 12 repository
(https://developer.nvidia.com/cuda-downloads: Linux > x86_64 > Debian > 12, then
'apt-get install cuda-toolkit'), which puts it in /usr/local/cuda, and run this script again.
A toolkit installed elsewhere works too: export CUDACXX=/path/to/bin/nvcc, then run this
script and cmake.
MESSAGE
  exit 1
fi
echo "CUDA toolkit: $("$nvcc" --version | grep -o 'release [0-9.]*')"
echo "Ready: cmake --preset release && cmake --build --preset release"
