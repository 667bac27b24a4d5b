#!/bin/sh
# tools/check_layers.sh [LIBDIR]: checks that lib/'s includes point one way (run by `make test`).
# The folders are the course's chapters, listed here from the bottom up; a file may include its
# own folder and the folders listed before it, never one listed after it:
#   core/      status codes, the random generator                 (includes nothing of lib/)
#   simd/      the kernels and their dispatch                      (its own folder only)
#   nn/        the components and the model: forward and backward  core, simd
#   formats/   llama2.c read/write, npy, JSON, atomic files, HF configs
#   tokenize/  the tokenizer, BPE training
#   decode/    the sampler, beam search
#   quant/     the Q8_0 scheme, the int8 Linear, the int8 file, the error budget
#   train/     loss, AdamW, the step, threads, data, checkpoints
#   inspect/   the dump, the NaN check, printing
#   tw.h       the umbrella header for programs: includes every folder
# One arrow runs up, by design, and is the only one allowed: the Linear layer (nn/linear.[ch]) may
# include quant/q8_0.h, the int8 weight, which itself includes only core/ and simd/. So a weight
# can be int8 without any other component knowing (the seam of docs/quantization.md).
# No file in lib/ includes tw.h, and every library include names its folder ("nn/block.h", not
# "block.h"; simd/ files may write "simd.h" and "q8.h" for their own headers), so this check sees
# every arrow. Prints one line per broken rule and exits 1 if there is any; one summary otherwise.
lib=${1:-lib}
order="core simd nn formats tokenize decode quant train inspect"
rank() { i=0; for d in $order; do [ "$d" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
bad=0
report() { echo "check_layers: $1" >&2; bad=1; }
# Each "#include "..."" line of the given files, as FILE:LINE:TARGET.
includes() { grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$@" 2>/dev/null |
             sed 's/^\([^:]*:[0-9]*\):.*include[[:space:]]*"\([^"]*\)".*/\1:\2/'; }
n=0
for f in "$lib"/*/*.[ch] "$lib"/*.[ch]; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  dir=$(dirname "$f"); layer=$(basename "$dir")
  [ "$dir" = "$lib" ] && layer=lib
  if [ "$layer" != lib ] && [ "$(rank "$layer")" -lt 0 ]; then
    report "$f: folder $layer/ is not in the order of tools/check_layers.sh (add it there)"
    continue
  fi
  for inc in $(includes "$f"); do
    where=${inc%:*}; target=${inc##*:}
    case "$target" in
      tw.h) report "$where includes tw.h: lib/ files include only the headers they use"; continue;;
    esac
    case "$layer" in
      lib) continue;;   # tw.h itself sits on top of everything
      simd) case "$target" in simd.h|q8.h|simd/*) continue;; esac
            report "$where: a simd/ file includes $target (the kernels include only simd/)"; continue;;
    esac
    case "$target" in
      */*) ;;
      *) report "$where: include \"$target\" names no folder (write \"nn/$target\", \"formats/...\", ...)"; continue;;
    esac
    tdir=${target%%/*}
    case "$f:$target" in
      */nn/linear.[ch]:quant/q8_0.h) continue;;   # the one seam (see the header of this file)
    esac
    tr=$(rank "$tdir")
    if [ "$tr" -lt 0 ]; then report "$where: $target is in no folder of lib/"; continue; fi
    [ "$tr" -le "$(rank "$layer")" ] ||
      report "$where: a $layer/ file includes $target ($layer/ comes before $tdir/ in the order)"
  done
done
[ "$bad" = 0 ] && echo "check_layers: $n lib/ files, every include points down ($(echo $order | sed 's/ / < /g'))"
exit $bad
