// testrun.h: running the toolkit's programs from a test, as a user runs them, and cleaning up
// what they write. Used by the suites that test ./generate, ./npydiff and the SIMD model path.
// Paths are relative to the top of the checkout (make test runs from there).
#ifndef TESTRUN_H
#define TESTRUN_H
#include <stddef.h>

// What a command did: its exit status (-1 if it did not exit normally, e.g. killed by a signal:
// a crash) and its captured output. Free with tt_run_free.
typedef struct { int rc; char *out, *err; } run_result;

// Runs a shell command with stdout and stderr captured (through files in a private temporary
// folder, removed after) and stdin from /dev/null.
run_result tt_run(const char *cmd);
void       tt_run_free(run_result *r);

// The whole file as a NUL-terminated string (an empty string if it cannot be read). Caller frees.
char *tt_slurp(const char *path);
int   tt_count_lines(const char *s);   // lines in s; an unterminated last line counts
int   tt_exists(const char *path);

// Removes a dump folder written by ./generate --dump: the files its manifest names, the manifest,
// tokens.txt, then the folder.
void tt_remove_dump(const char *dir);

#endif
