#!/bin/sh
# tools/check_no_shell.sh [DIR...]: checks that no program of the toolkit runs a shell (run by
# `make test`). A file name pasted into a shell command line is a command waiting to happen
# (`--curve 'c$(touch MARK).dat'`), so the C files of lib/, tools/, lessons/ (with the
# exercises), bench/ and fuzz/ may not call
#   popen(...)  system(...)  execl/execlp/execle/execv/execvp("sh" or "/bin/sh", ...)
# Programs start gnuplot with lib/inspect/gnuplot.c (fork + execvp, the script on a pipe) and other
# programs with execvp and an argument vector. tests/ is not checked: the suite runs the
# programs the way a user types them, with command lines it builds from its own fixed names and
# mkdtemp folders (tests/testrun.c).
# Comments (// to the end of the line) are ignored. Prints one line per call found and exits 1
# if there is any; prints one summary line otherwise.
dirs=${*:-lib tools lessons bench fuzz}
bad=0
n=0
for f in $(find $dirs -name '*.[ch]' 2>/dev/null | sort); do
  n=$((n + 1))
  # FILE:LINE:TEXT with // comments removed, then the calls that start a shell.
  hits=$(grep -n '' "$f" | sed 's|//.*||' |
         grep -E '(^|[^A-Za-z0-9_])(popen|system)[[:space:]]*\(|(^|[^A-Za-z0-9_])exec[lv]p?e?[[:space:]]*\([[:space:]]*"(/bin/|/usr/bin/)?(sh|bash|dash)"')
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | while IFS= read -r h; do
      printf 'check_no_shell: %s:%s: starts a shell (use tw_gnuplot_run, or fork + execvp with an argument vector): %s\n' "$f" "${h%%:*}" "${h#*:}" >&2
    done
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "check_no_shell: $n C files in $dirs, none calls popen, system or exec of a shell"
exit $bad
