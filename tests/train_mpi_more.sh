#!/bin/sh
# tests/train_mpi_more.sh (make test-train-mpi, run by .ci/extra): the multi-process checks of
# ./train-mpi that take longer than make test allows (each mpirun costs ~0.5 s to start):
#   1. 3 and 4 processes (oversubscribed), with and without --zero 1, write the same bytes as one
#      process with --grad-accum 3 / 4: tolerance 0 (the reduction adds the processes' gradients
#      in rank order, as one process adds its micro-batches: lib/train/dist.h); and the layer
#      buckets sent during the backward pass (--overlap 1) give the same bytes as after it;
#   2. a 2-process run stopped after 7 of 20 steps and resumed (shuffled batches, from scratch,
#      with and without --zero 1) writes the same weights and state as an uninterrupted one;
#   3. a NaN in process 1's gradient at step 3 stops both processes with one line on stderr,
#      exit 1, and keeps the checkpoint of step 2, byte-identical to a run stopped after 2 steps.
# Without Open MPI it says so in one line and passes.
set -eu
cd "$(dirname "$0")/.."
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x ./train-mpi ]; then
  echo "test-train-mpi: Open MPI is not installed (no mpirun or ./train-mpi): skipped"
  exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI="mpirun -q --oversubscribe"
dir=$(mktemp -d "${TMPDIR:-/tmp}/tw_train_mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "test-train-mpi: FAILED: $1"; exit 1; }
G=data/golden/train/llama
DET="--init $G/init.bin --tokens $G/tokens.bin --no-shuffle --seq 12 --steps 20 --lr 5e-3 --warmup 0
     --min-lr 5e-3 --weight-decay 0.1 --beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1 --curve none"

# 1. P processes == one process with --grad-accum P.
for P in 3 4; do
  ./train $DET --batch 1 --grad-accum $P --out "$dir/one$P.bin" > "$dir/one$P.txt"
  for Z in 0 1; do
    $MPI -np $P ./train-mpi $DET --batch 1 --zero $Z --out "$dir/mpi$P.bin" > "$dir/mpi$P.txt"
    cmp -s "$dir/one$P.bin" "$dir/mpi$P.bin" || fail "$P processes (--zero $Z) differ from --grad-accum $P"
    [ "$(grep -c '^step ' "$dir/mpi$P.txt")" = 20 ] || fail "$P processes did not print 20 steps"
    grep '^step ' "$dir/one$P.txt" | cut -d' ' -f1-3 > "$dir/a"
    grep '^step ' "$dir/mpi$P.txt" | cut -d' ' -f1-3 > "$dir/b"
    cmp -s "$dir/a" "$dir/b" || fail "$P processes (--zero $Z) print other losses than --grad-accum $P"
  done
done
echo "test-train-mpi: 3 and 4 processes (--zero 0 and 1) == --grad-accum 3 and 4 in one process, byte for byte"

# 1b. Sending each layer's bucket during the backward pass (the default) or after it changes no
# bit, with micro-batches (the last one's part is added bucket by bucket as it is sent) and ZeRO.
$MPI -np 2 ./train-mpi $DET --batch 1 --grad-accum 2 --zero 1 --out "$dir/ov1.bin" > /dev/null
$MPI -np 2 ./train-mpi $DET --batch 1 --grad-accum 2 --zero 1 --overlap 0 --out "$dir/ov0.bin" > /dev/null
cmp -s "$dir/ov1.bin" "$dir/ov0.bin" || fail "--overlap 1 and --overlap 0 differ (2 processes, --grad-accum 2)"
echo "test-train-mpi: 2 processes x --grad-accum 2: --overlap 1 == --overlap 0, byte for byte"

# 2. Stopped and resumed == uninterrupted, 2 processes.
SCR="--tokens data/golden/train/qwen3/tokens.bin --style qwen3 --vocab 65 --seq 12 --batch 2 --steps 20
     --lr 1e-2 --min-lr 1e-3 --warmup 2 --seed 9 --curve none"
for Z in 0 1; do
  $MPI -np 2 ./train-mpi $SCR --zero $Z --out "$dir/full.bin" --state "$dir/full.state" > /dev/null
  $MPI -np 2 ./train-mpi $SCR --zero $Z --stop-after 7 --out "$dir/part.bin" --state "$dir/part.state" > /dev/null
  $MPI -np 2 ./train-mpi $SCR --zero $Z --resume "$dir/part.state" --out "$dir/part.bin" --state "$dir/part.state" \
    > "$dir/resumed.txt"
  grep -q '^step 8/20' "$dir/resumed.txt" && ! grep -q '^step 7/20' "$dir/resumed.txt" || fail "resume did not start at step 8"
  cmp -s "$dir/full.bin" "$dir/part.bin" || fail "resumed 2-process weights (--zero $Z) differ"
  cmp -s "$dir/full.state" "$dir/part.state" || fail "resumed 2-process state (--zero $Z) differs"
done
# A state of 2 processes is refused by 3 (another global batch), with one line.
if $MPI -np 3 ./train-mpi $SCR --resume "$dir/full.state" > /dev/null 2> "$dir/err"; then fail "3 processes resumed a 2-process state"; fi
[ "$(wc -l < "$dir/err")" = 1 ] && grep -q 'global batch' "$dir/err" || fail "resume with 3 processes: $(cat "$dir/err")"
echo "test-train-mpi: 2 processes stopped after 7 steps and resumed == uninterrupted (weights and state), --zero 0 and 1"

# 3. NaN on process 1 at step 3.
set +e
$MPI -np 2 ./train-mpi $DET --batch 2 --save-every 1 --nan-at 1:3 --out "$dir/nan.bin" > "$dir/nan.txt" 2> "$dir/nan.err"
rc=$?
set -e
[ $rc = 1 ] || fail "NaN run: exit $rc, not 1"
[ "$(wc -l < "$dir/nan.err")" = 1 ] || fail "NaN run: stderr is not one line: $(cat "$dir/nan.err")"
grep -q '^train: step 3: .*process 1 of 2.*checkpoint of step 2 is kept' "$dir/nan.err" || fail "NaN line: $(cat "$dir/nan.err")"
grep -q '^step 4/' "$dir/nan.txt" && fail "a step after the NaN was printed"
./train $DET --batch 2 --grad-accum 2 --stop-after 2 --out "$dir/two.bin" > /dev/null
cmp -s "$dir/nan.bin" "$dir/two.bin" || fail "the kept checkpoint is not step 2's weights"
echo "test-train-mpi: a NaN on process 1 at step 3 stopped both with one line; step 2's checkpoint kept"

# 4. A bad flag: every process stops, one line, exit 2.
set +e
$MPI -np 2 ./train-mpi $DET --batch 2 --zero 5 > "$dir/bad.txt" 2> "$dir/bad.err"
rc=$?
set -e
[ $rc = 2 ] && [ "$(wc -l < "$dir/bad.err")" = 1 ] && grep -q -- '--zero' "$dir/bad.err" || fail "bad flag: exit $rc: $(cat "$dir/bad.err")"
echo "test-train-mpi: a bad flag stops both processes with one line (exit 2)"
