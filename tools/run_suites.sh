#!/bin/sh
# tools/run_suites.sh RUNNER: runs the Check suites of RUNNER (build/tests/run_tests) as a few
# processes side by side, then prints each one's output in a fixed order and the sum of their
# summary lines. `make test` uses it so that the slow suites (they run the lessons, the tools and
# the corrupt-file corpus as programs) overlap with the rest on a machine with several cores.
#   CK_RUN_SUITE=name   runs that one suite alone, as the runner itself would
#   TEST_GROUPS="a b"   the suites given processes of their own (the rest share REST_PARTS)
#   REST_PARTS=2        how many processes share the rest (TW_SUITE_PART, tests/test_main.c)
# Exits 1 if any group failed, like the runner.
runner=${1:?usage: tools/run_suites.sh RUNNER}
if [ -n "$CK_RUN_SUITE" ]; then exec "$runner"; fi
# The lessons, ./generate and the corrupt files run programs; peak, layers, train and bpe are the
# slowest of the rest; train_dist mostly waits for mpirun to start its processes, so it waits
# beside the others. With the slow ones in the shared process, that process ran alone for the last 2 s
# (12.2-12.7 s for the suites on 2 cores; 11.3-11.7 s split so, 3 alternated runs). With more
# suites the rest, one process of about 10 s of CPU, came to end 8 s after every other group, so it
# runs as two processes, every second suite each.
groups=${TEST_GROUPS-"lessons generate corrupt peak layers train bpe train_dist"}
parts=${REST_PARTS-2}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run_suites.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
i=0
for g in $groups; do
  i=$((i + 1))
  CK_RUN_SUITE=$g "$runner" >"$tmp/$i.out" 2>&1 &
done
rest=$(echo $groups | tr ' ' ',')
p=0
while [ $p -lt "$parts" ]; do
  TW_SKIP_SUITES=$rest TW_SUITE_PART=$p/$parts "$runner" >"$tmp/rest$p.out" 2>&1 &
  p=$((p + 1))
done
status=0
wait || status=1
# wait with no operand returns 0; each group's own status is recovered from its summary line.
checks=0 failures=0 errors=0 n=0
for f in "$tmp"/rest*.out $(j=1; while [ $j -le $i ]; do echo "$tmp/$j.out"; j=$((j + 1)); done); do
  cat "$f"
  line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$f" | tail -1)
  if [ -z "$line" ]; then echo "run_suites: a group ended without Check's summary line (crashed?)" >&2; status=1; continue; fi
  set -- $(echo "$line" | sed 's/[^0-9 ]//g')
  n=$((n + 1)); checks=$((checks + $2)); failures=$((failures + $3)); errors=$((errors + $4))
done
[ $((failures + errors)) -eq 0 ] || status=1
pct=0; [ "$checks" -gt 0 ] && pct=$(( (checks - failures - errors) * 100 / checks ))
echo "all suites ($n processes side by side), summed:"
echo "$pct%: Checks: $checks, Failures: $failures, Errors: $errors"
exit $status
