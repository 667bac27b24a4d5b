#!/bin/sh
# tools/check_file_refs.sh [ROOT]: every file name a comment or a doc mentions exists in the tree
# (run by `make test`), so a file that moves or goes cannot leave its old name behind.
# Reads the comments of lib/, tests/, tools/, lessons/, bench/, fuzz/, mk/, viz/ and the Makefile
# (// and /* */ in C outside literals, # in shell, make and gnuplot, # and docstrings in Python)
# and the text of docs/, and takes each word that ends in .c, .h, .py, .sh or .mk:
#   a bare name (mha.c)            must be the name of some file of the tree
#   a path (nn/mha.c, lib/nn/mha.c) must be the end of some file's path, whole folders only
# and each folder named after lib/ (as in lib/nn/), which must exist.
# Not checked: system headers in angle brackets (<stdio.h>), names with wildcards (q8_*.c,
# linear.[ch]), and other projects' files, listed in EXTERNAL below. README.md is not read.
# Prints FILE:LINE: and the stale name on stderr, one line each, and exits 1 if there is any.
root=${1:-.}
cd "$root" || exit 2
# Other projects' files that comments cite by name (llama2.c and its run.c, runq.c, train.py,
# export.py, model.py; llm.c), and the placeholder lessons/NN_topic.c (a lesson's file name).
EXTERNAL="llama2.c llm.c run.c runq.c train.py export.py model.py
          lessons/NN_topic.c"
scan=$(find lib tests tools lessons bench fuzz mk viz docs Makefile -type f \
         \( -name '*.[ch]' -o -name '*.py' -o -name '*.sh' -o -name '*.mk' -o -name '*.md' \
            -o -name '*.gp' -o -name Makefile \) 2>/dev/null | sort)
# The tree (every file but build outputs and data) on awk's standard input, then the files to scan.
find . \( -name .git -o -name 'build*' -o -name out -o -name data \) -prune -o -type f -print |
  sed 's|^\./||' |
awk -v external="$EXTERNAL" '
BEGIN { gsub(/[ \t\n]+/, " ", external); STDERR = "cat 1>&2" }
FNR == NR {
    have[$0] = 1; n = split($0, part, "/"); base[part[n]] = 1; tree[++ntree] = $0
    d = ""; for (k = 1; k < n; k++) { d = d (k > 1 ? "/" : "") part[k]; dirs[d] = 1 }
    next
}
FNR == 1 {   # a new file: how its comments are written
    kind = FILENAME ~ /\.[ch]$/ ? "c" : FILENAME ~ /\.md$/ ? "md" : FILENAME ~ /\.py$/ ? "py" : "sh"
    in_block = 0
}
{
    text = comment_text($0)
    rest = text   # a folder named after lib/ must exist, even where no file name follows it
    while (match(rest, /lib\/[A-Za-z0-9_]+\//)) {
        dir = substr(rest, RSTART, RLENGTH - 1)
        before = RSTART > 1 ? substr(rest, RSTART - 1, 1) : ""
        rest = substr(rest, RSTART + RLENGTH)
        if (before !~ /[A-Za-z0-9_.-]/ && !(dir in dirs)) {
            printf "%s:%d: %s/ (no such folder in the tree)\n", FILENAME, FNR, dir | STDERR
            bad = 1
        }
    }
    while (match(text, /[A-Za-z0-9_][A-Za-z0-9_.\/-]*\.(c|h|py|sh|mk)/)) {
        name = substr(text, RSTART, RLENGTH)
        before = RSTART > 1 ? substr(text, RSTART - 1, 1) : ""
        after = substr(text, RSTART + RLENGTH, 1)
        text = substr(text, RSTART + RLENGTH)
        # not names: x.html, <stdio.h>, q8_*.c, linear.[ch]
        if (after ~ /[A-Za-z0-9_*\[{]/ || before ~ /[<*{}\[\]$%]/) continue
        sub(/^(\.\.?\/)+/, "", name)
        if (!exists(name)) {
            printf "%s:%d: %s (no such file in the tree)\n", FILENAME, FNR, name | STDERR
            bad = 1
        }
    }
}
# The comment part of a line: everything in docs; docstrings and the text after # in Python; the
# text after # in shell and make; // and /* */ in C, outside string and character literals.
function comment_text(line,    out, i, k, n, ch, two) {
    if (kind == "md") return line
    if (kind == "py") {   # docstrings whole, else the text after #
        i = gsub(/"""/, "\"\"\"", line)
        if (in_block || i) { if (i % 2) in_block = !in_block; return line }
    }
    if (kind == "py" || kind == "sh") { i = index(line, "#"); return i ? substr(line, i) : "" }
    if (line ~ /^[ \t]*#[ \t]*include/) return ""
    # C: walk the line, skipping string and character literals, collecting // and /* */ text.
    out = ""; n = length(line); i = 1
    while (i <= n) {
        if (in_block) {
            k = index(substr(line, i), "*/")
            if (!k) return out " " substr(line, i)
            out = out " " substr(line, i, k - 1); i += k + 1; in_block = 0; continue
        }
        ch = substr(line, i, 1)
        if (ch == "\"" || ch == "\047") {   # a literal: to its closing quote, past escapes
            for (i++; i <= n && substr(line, i, 1) != ch; i++) if (substr(line, i, 1) == "\\") i++
            i++; continue
        }
        two = substr(line, i, 2)
        if (two == "//") return out " " substr(line, i + 2)
        if (two == "/*") { in_block = 1; i += 2; continue }
        i++
    }
    return out
}
function exists(name,    i, n, k) {
    if (index(" " external " ", " " name " ")) return 1
    if (name !~ /\//) return name in base
    if (name in have) return 1
    n = length(name)
    for (k = 1; k <= ntree; k++)
        if (length(tree[k]) > n && substr(tree[k], length(tree[k]) - n) == "/" name) return 1
    return 0
}
END { close(STDERR); exit bad }
' - $scan
status=$?
[ "$status" = 0 ] &&
  echo "check_file_refs: every file name in $(echo $scan | wc -w | tr -d ' ') files' comments and docs exists"
exit $status
