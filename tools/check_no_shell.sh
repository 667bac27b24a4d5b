#!/bin/sh
# tools/check_no_shell.sh [DIR...]: checks that no program of the toolkit runs a shell (run by
# `make test`). A file name pasted into a shell command line is a command waiting to happen
# (`--curve 'c$(touch MARK).dat'`), so the C files of lib/, tools/, lessons/ (with the
# exercises), bench/, fuzz/ and tests/ may not
#   call popen(...) or system(...),
#   exec a shell by name: execl/execlp/execle/execv/execvp("sh" or "/bin/sh", ...) (bash, dash too),
#   or spell a shell's -c in a string: "sh -c ...", "/bin/bash -c", { "sh", "-c", ... },
# and the Python files there may not call os.system, os.popen or pass shell=True.
# Programs start gnuplot with lib/inspect/gnuplot.c (fork + execvp, the script on a pipe) and other
# programs with execvp and an argument vector; the suite runs them with tests/testrun.c (tt_run
# splits a command line itself, with no $, backquote, glob or redirection, and execs the words).
# Running a script file by its #! line or as `sh FILE` is allowed: no command line is parsed.
# Comments (// or # to the end of the line) are ignored, and so are calls spelled inside a string
# ("system(" in a test that looks for it); the -c rule reads the strings. A C line marked with the
# comment `check_no_shell: example` is skipped: tests/test_no_shell.c writes bad lines as data and
# proves that tt_run refuses `sh -c` (tests/testrun.c refuses it at run time as well). Prints one line per
# finding and exits 1 if there is any; prints one summary line otherwise.
dirs=${*:-lib tools lessons bench fuzz tests}
bad=0
n=0
report() {   # FILE HITS WHAT: one line per hit, with the line as it is in the file
  printf '%s\n' "$2" | while IFS= read -r h; do
    printf 'check_no_shell: %s:%s: %s: %s\n' "$1" "${h%%:*}" "$3" "$(sed -n "${h%%:*}p" "$1")" >&2
  done
}
# C: char literals emptied first (a '"' must not open a string), then // comments cut.
strip_c_chars="s/'(\\\\.|[^'\\\\])'/''/g"
strip_c_strings='s/"([^"\\]|\\.)*"/""/g'
# The text before a // that is outside any string (LINE: kept).
cut_comments='s#^([0-9]+:)(([^"/]|"([^"\\]|\\.)*"|/[^/"])*)//.*#\1\2#'
files=$(find $dirs \( -name '*.[ch]' -o -name '*.py' \) 2>/dev/null | sort)
n=$(printf '%s\n' $files | grep -c .)
# Only a file whose raw text matches one of the rules' patterns can have a finding (the steps below
# only remove text), so one grep over every file picks the few that get the full reading.
rules='(popen|system)[[:space:]]*\(|exec[lv]p?e?[[:space:]]*\(|(sh|bash|dash)([[:space:]]+|",[[:space:]]*")-[A-Za-z]*c|os\.(system|popen)|shell[[:space:]]*='
candidates=$(printf '%s\n' $files | xargs grep -lE "$rules" 2>/dev/null)
for f in $candidates; do
  case $f in
  *.py)
    hits=$(grep -n '' "$f" | sed 's/#.*//' |
           grep -E '(^|[^A-Za-z0-9_])os\.(system|popen)[[:space:]]*\(|shell[[:space:]]*=[[:space:]]*True')
    [ -n "$hits" ] && { report "$f" "$hits" "runs a shell (use subprocess.run with an argument list)"; bad=1; }
    ;;
  *)
    # FILE:LINE:TEXT with char literals emptied and // comments removed (strings kept: the exec
    # and -c rules read them), then the same with the strings emptied for the call rule.
    code=$(grep -n '' "$f" | grep -v 'check_no_shell: example' | sed -E "$strip_c_chars" | sed -E "$cut_comments")
    calls=$(printf '%s\n' "$code" | sed -E "$strip_c_strings" |
            grep -E '(^|[^A-Za-z0-9_])(popen|system)[[:space:]]*\(')
    execs=$(printf '%s\n' "$code" |
            grep -E '(^|[^A-Za-z0-9_])exec[lv]p?e?[[:space:]]*\([[:space:]]*"(/bin/|/usr/bin/)?(sh|bash|dash)"|"(/bin/|/usr/bin/)?(sh|bash|dash)([[:space:]]+|",[[:space:]]*")-[A-Za-z]*c')
    hits=$(printf '%s\n%s\n' "$calls" "$execs" | grep -v '^$' | sort -t: -k1,1n -u)
    [ -n "$hits" ] && { report "$f" "$hits" "starts a shell (use tw_gnuplot_run, tt_run, or fork + execvp with an argument vector)"; bad=1; }
    ;;
  esac
done
[ "$bad" = 0 ] && echo "check_no_shell: $n C and Python files in $dirs, none runs a shell (popen, system, exec of sh, sh -c, os.system, shell=True)"
exit $bad
