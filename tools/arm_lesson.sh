#!/bin/sh
# tools/arm_lesson.sh ARM_ROOT ARM_BUILD LESSON_SOURCE: one lesson of `make test-arm-lessons`
# (mk/arm.mk): runs it natively (./lessonN) and its AArch64 build under qemu-aarch64, then compares
# every tensor the two wrote with ./npydiff. Prints one line; exits 1 if anything failed.
# Run from the top of the checkout; mk/arm.mk runs two at a time (one per core of the machines
# CI uses), so a slow lesson under qemu no longer holds up the rest.
root=${1:?usage: tools/arm_lesson.sh ARM_ROOT ARM_BUILD lessons/NN_name.c}
build=${2:?usage: tools/arm_lesson.sh ARM_ROOT ARM_BUILD lessons/NN_name.c}
f=${3:?usage: tools/arm_lesson.sh ARM_ROOT ARM_BUILD lessons/NN_name.c}
nn=$(basename "$f" .c)
n=$(echo "$nn" | sed 's/_.*//; s/^0//')
./lesson"$n" --no-plot --out out/arm/x86_64-"$n" > /dev/null || { echo "lesson$n: failed natively"; exit 1; }
# A lesson's header may ask for other flags here (`// Arm run: --simd naive`, lesson 14) or
# another absolute tolerance (`// Arm tolerance: 1e-5`, lesson 18); see mk/arm.mk.
extra=$(sed -n 's|^// Arm run: \(--[a-z-]* [a-z0-9]*\).*|\1|p' "$f")
# $extra is one flag and its value, split into two words on purpose.
if ! qemu-aarch64 -L "$root" "$build"/lessons/"$nn" --no-plot --out out/arm/aarch64-"$n" $extra \
     > out/arm/lesson"$n".log 2>&1; then
  echo "lesson$n: FAILED on AArch64 (see out/arm/lesson$n.log)"; exit 1
fi
if ! ls out/arm/x86_64-"$n"/*.npy > /dev/null 2>&1; then
  echo "lesson$n: ran on AArch64 (writes no tensors)"; exit 0
fi
atol=$(sed -n 's|^// Arm tolerance: \([0-9.e+-]*\).*|\1|p' "$f")
if ! ./npydiff out/arm/aarch64-"$n" out/arm/x86_64-"$n" --atol "${atol:-1e-6}" --rtol 1e-5 \
     > out/arm/lesson"$n".diff 2>&1; then
  echo "lesson$n: AArch64 tensors differ from x86-64 (see out/arm/lesson$n.diff)"; exit 1
fi
same=0
for t in out/arm/x86_64-"$n"/*.npy; do
  cmp -s "$t" out/arm/aarch64-"$n"/"${t##*/}" && same=$((same + 1))
done
echo "lesson$n: ran on AArch64; tensors vs x86-64: $(tail -1 out/arm/lesson"$n".diff), $same byte-for-byte equal"
