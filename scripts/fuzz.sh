#!/usr/bin/env bash
# Fuzzes every file reader with libFuzzer for a bounded time (clang, ASan + UBSan).
#
# Usage: scripts/fuzz.sh [SECONDS_PER_READER] [READER...]
#   SECONDS_PER_READER  default 60; READER one of image audio csv npy raw kernel_file (default all)
#
# Each harness starts from its seed corpus (tests/fuzz/corpus/<reader>/) and its regression
# inputs, copied to build-fuzz/work/<reader>/ so the repository stays clean. A finding stops the
# script with exit 1 and the input's path: commit it to tests/fuzz/regressions/<reader>/ with the
# fix (the fuzz_replay_<reader> unit test replays it in every build from then on).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
readers=("$@")
((${#readers[@]})) || readers=(image audio csv npy raw kernel_file)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

# Leaks inside third-party libraries, each explained in the file, are not findings.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"

status=0
for reader in "${readers[@]}"; do
  work="build-fuzz/work/$reader"
  findings="build-fuzz/findings/$reader"
  rm -rf "$work"
  mkdir -p "$work" "$findings"
  cp tests/fuzz/corpus/"$reader"/* "$work"/
  if [[ -d tests/fuzz/regressions/$reader ]]; then cp tests/fuzz/regressions/"$reader"/* "$work"/ 2>/dev/null || true; fi
  echo "=== fuzz_$reader for ${seconds}s"
  # -timeout: one input taking longer is a hang; -rss_limit_mb: a reader that allocates past what
  # its input justifies is a finding (the image harness caps decodes at 16 Mpixel).
  if ! "build-fuzz/tests/fuzz/fuzz_$reader" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 \
         -print_final_stats=1 -artifact_prefix="$findings/" "$work" 2>"build-fuzz/fuzz_$reader.log"; then
    status=1
    tail -n 40 "build-fuzz/fuzz_$reader.log"
    echo "FINDING in fuzz_$reader: $(ls "$findings")  (log: build-fuzz/fuzz_$reader.log)"
    continue
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/fuzz_$reader.log" | grep -o '[0-9]*$')
  coverage=$(grep -o 'cov: [0-9]*' "build-fuzz/fuzz_$reader.log" | tail -n 1)
  echo "fuzz_$reader: $runs inputs in ${seconds}s, no finding ($coverage, corpus $(ls "$work" | wc -l) files)"
done
exit "$status"
