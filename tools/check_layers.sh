#!/bin/sh
# tools/check_layers.sh [LIBDIR]: checks that lib/'s includes point one way (run by `make test`).
#   lib/nn/    the course's components: may include nn/ and simd/ only (never io/ or real/)
#   lib/io/    file formats and inspection: may include nn/ and io/
#   lib/simd/  the kernels: include nothing of nn/, io/ or real/ (only their own simd.h and q8.h,
#              and other simd/ headers by folder: "simd/peak.h")
#   lib/real/  real models and configs: may include anything in lib/ except tw.h
#   lib/tw.h   the umbrella header for programs: includes every folder
# No file in lib/ includes tw.h (the umbrella header is for programs), and every library include
# names its folder ("nn/block.h", not "block.h"), so this check sees every arrow.
# Prints one line per broken rule and exits 1 if there is any; prints one summary line otherwise.
lib=${1:-lib}
bad=0
report() { echo "check_layers: $1" >&2; bad=1; }
# Each "#include "..."" line of the given files, as FILE:LINE:TARGET.
includes() { grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$@" 2>/dev/null |
             sed 's/^\([^:]*:[0-9]*\):.*include[[:space:]]*"\([^"]*\)".*/\1:\2/'; }
n=0
for f in "$lib"/nn/*.[ch] "$lib"/io/*.[ch] "$lib"/real/*.[ch] "$lib"/simd/*.[ch] "$lib"/*.[ch]; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  layer=$(basename "$(dirname "$f")")
  for inc in $(includes "$f"); do
    where=${inc%:*}; target=${inc##*:}
    case "$target" in
      tw.h) report "$where includes tw.h: lib/ files include only the headers they use"; continue;;
    esac
    case "$layer/$target" in
      nn/nn/*|nn/simd/*) ;;
      io/nn/*|io/io/*) ;;
      real/nn/*|real/io/*|real/real/*|real/simd/*) ;;
      simd/simd.h|simd/q8.h|simd/simd/*) ;;   # the fp32 and the int8 kernel headers; simd/peak.h
      lib/*/*) ;;   # tw.h itself, the umbrella for programs, sits on top of everything
      */*/*) report "$where: a $layer/ file includes $target ($layer/ must not depend on it)";;
      *) report "$where: include \"$target\" names no folder (write \"nn/$target\", \"io/...\" or \"real/...\")";;
    esac
  done
done
[ "$bad" = 0 ] && echo "check_layers: $n lib/ files, every include points down (nn <- io <- real; simd alone; no tw.h)"
exit $bad
