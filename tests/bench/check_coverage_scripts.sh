#!/usr/bin/env bash
# bench/coverage-matrix.sh and bench/matrix_targets.py without a GPU. A stand-in for kernellab-cli
# writes the matrices of a recorded run (docs/bench-h100-2026-12-06). The test checks the runs each
# form of the script asks for, the targets table's values, and the exit codes: 0 met, 1 not met,
# 2 bad input. Exit 77 (ctest: skipped) without python3.
#   tests/bench/check_coverage_scripts.sh SOURCE_DIR
set -uo pipefail
source=$1
if ! command -v python3 >/dev/null; then
  echo "skipped: python3 is needed"
  exit 77
fi
recorded=$source/docs/bench-h100-2026-12-06
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_equal() {  # what, wanted, got
  [[ "$2" == "$3" ]] || fail "$1: $3, expected $2"
}
expect_line() {  # file, exact line
  grep -qxF -- "$2" "$1" || fail "$1 has no line: $2"
}

# The stand-in: logs its arguments, then writes the recorded matrix the arguments name.
cat > "$work/cli" <<EOF
#!/usr/bin/env bash
echo "\$*" >> "$work/calls"
[ "\$1" = info ] && exit 0
out= ops= sizes=
while [ \$# -gt 0 ]; do
  case \$1 in --out-dir) out=\$2; shift ;; --ops) ops=\$2; shift ;; --sizes) sizes=\$2; shift ;; esac
  shift
done
mkdir -p "\$out"
case "\$sizes/\$ops" in
  8191x8179/) cp "$recorded/coverage-matrix-8191x8179.json" "\$out/kernellab-matrix.json" ;;
  /conv2d,transpose) cp "$recorded/coverage-matrix-conv2d-transpose.json" "\$out/kernellab-matrix.json" ;;
  /histogram,conv1d) cp "$recorded/coverage-matrix-histogram-conv1d.json" "\$out/kernellab-matrix.json" ;;
  *) echo "stand-in: no recorded matrix for sizes '\$sizes', ops '\$ops'" >&2; exit 1 ;;
esac
EOF
chmod +x "$work/cli"
script=$source/bench/coverage-matrix.sh
targets=$source/bench/matrix_targets.py

# The round matrices: two runs, then the table (targets not met: exit 1).
KERNELLAB_CLI=$work/cli ODD=0 NPP=0 bash "$script" "$work/round" > "$work/round.log" 2>&1
expect_equal "ODD=0 NPP=0, exit status" 1 $?
expect_equal "ODD=0 NPP=0, CLI calls" 3 "$(wc -l < "$work/calls")"
grep -q -- "--ops conv2d,transpose --border replicate --out-dir $work/round/round-images" "$work/calls" ||
  fail "no conv2d and transpose run with the replicate border"
table=$work/round/targets.md
expect_line "$table" "| every memory-bound cell >= 60% of copy | 7 of 100 under: conv2d gaussian 15x15 u8 x4 45.4%, conv2d gaussian 15x15 u8 x3 46.0%, conv2d gaussian 15x15 u8 x1 48.9%, conv2d custom 5x5 (rank 5) u8 x1 51.9%, conv2d custom 5x5 (rank 5) u8 x3 55.4%, conv2d custom 5x5 (rank 5) u8 x4 56.2%, conv2d gaussian 9x9 u8 x1 57.9% | no |"
expect_line "$table" "| every compute-bound cell >= 55% of FMA | all 3; lowest conv1d K=127 f32 x1 61.4% | yes |"
expect_line "$table" "| transpose u8 x1 >= 90% of copy | 89.8% (optimized, 0.0506 ms) | no |"
expect_line "$table" "| custom 5x5 (rank 5) | **51.9** | **55.4** | **56.2** | 86.1 | 84.7 | 83.8 | 98.8 | 100.4 | 100.7 |"
expect_line "$table" "- conv1d K=127 (shared): 0.1088 ms, 61.4% of FMA"

# The odd size alone: one run, no table (exit 0).
: > "$work/calls"
KERNELLAB_CLI=$work/cli ROUND=0 NPP=0 bash "$script" "$work/odd" > "$work/odd.log" 2>&1
expect_equal "ROUND=0 NPP=0, exit status" 0 $?
expect_equal "ROUND=0 NPP=0, CLI calls" 2 "$(wc -l < "$work/calls")"
[[ -f "$work/odd/odd/kernellab-matrix.json" && ! -e "$work/odd/targets.md" ]] ||
  fail "ROUND=0 NPP=0: expected odd/kernellab-matrix.json and no targets.md"

# NPP needs the round matrix: refused before any run.
: > "$work/calls"
KERNELLAB_CLI=$work/cli ROUND=0 bash "$script" "$work/refused" > "$work/refused.log" 2>&1
expect_equal "ROUND=0 with NPP, exit status" 2 $?
[[ ! -s "$work/calls" && ! -e "$work/refused" ]] || fail "ROUND=0 with NPP ran something"

# Both calls' files and NPP's, read together.
python3 "$targets" --round "$work/round/round-images/kernellab-matrix.json" \
  "$work/round/round-signals/kernellab-matrix.json" --odd "$work/odd/odd/kernellab-matrix.json" \
  --npp "$recorded/npp.csv" > "$work/all.md" 2> "$work/all.err"
expect_equal "matrix_targets.py on every file, exit status" 1 $?
expect_line "$work/all.md" "| odd size within 1.2x of the round size's time per element | 103 cells, 0.990-1.216x; the largest conv2d gaussian 15x15 u8 x3; over: conv2d gaussian 15x15 u8 x3 1.216x | no |"
grep -qF -- "| >= 1.2x NPP on every cell NPP has | 72 of 78 cells; lowest transpose f32 x4 1.01x; under: " "$work/all.md" ||
  fail "no NPP row of 72 of 78 cells"

# Bad input: exit 2 with the reason, never a traceback or a table.
expect_bad() {  # what, expected text in the message, matrix_targets.py arguments...
  local what=$1 text=$2
  shift 2
  python3 "$targets" "$@" > "$work/bad.out" 2> "$work/bad.err"
  expect_equal "$what, exit status" 2 $?
  grep -qF -- "$text" "$work/bad.err" || fail "$what: no '$text' in: $(cat "$work/bad.err")"
  ! grep -q Traceback "$work/bad.err" || fail "$what: a traceback"
}
round_json=$recorded/coverage-matrix-conv2d-transpose.json
edited_matrix() {  # output file, a Python statement on the recorded round matrix `m`
  python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"))' "$round_json" "$1" "$2"
}
expect_bad "a missing matrix" "No such file" --round "$work/missing.json"
echo '{"cells": [' > "$work/truncated.json"
expect_bad "a truncated matrix" "JSONDecodeError" --round "$work/truncated.json"
edited_matrix "$work/failed.json" 'm["cells"][0].update(ok=False, error="output differs")'
expect_bad "a failed cell" "failed: output differs" --round "$work/failed.json"
edited_matrix "$work/classless.json" 'for c in m["cells"]: c.pop("class")'
expect_bad "a matrix without classes" "no cell classes" --round "$work/classless.json"
expect_bad "a cell in two files" "is in another --round file too" --round "$round_json" "$round_json"
expect_bad "a missing NPP file" "No such file" --round "$round_json" --npp "$work/missing.csv"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "coverage-matrix.sh and matrix_targets.py: every check passed"
