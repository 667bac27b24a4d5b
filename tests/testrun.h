// testrun.h: running the toolkit's programs from a test, as a user runs them, and cleaning up
// what they write. Used by the suites that run the toolkit's programs and scripts.
// Paths are relative to the top of the checkout (make test runs from there).
#ifndef TESTRUN_H
#define TESTRUN_H
#include <stddef.h>
#include <sys/types.h>

// What a command did: its exit status (-1 if it did not exit normally, e.g. killed by a signal:
// a crash) and its captured output. Free with tt_run_free.
typedef struct { int rc; char *out, *err; } run_result;

// No shell runs anywhere in the suite (tools/check_no_shell.sh checks tests/ too): a command is a
// program and its argument vector, started with fork + execvp.
//
// tt_run(cmd) splits cmd into words (tt_split) and runs them with stdout and stderr captured
// (through files in a private temporary folder, removed after) and stdin from /dev/null. Leading
// words of the form NAME=value (NAME a C identifier) set NAME for the child only, as in
// `TW_SIMD=naive ./generate ...`; the first other word is the program, found on PATH by execvp
// when it holds no '/'. A program that cannot be started gives rc 127 and one line on err.
run_result tt_run(const char *cmd);
// The same with the argument vector given (NULL-terminated) and env NULL or a NULL-terminated list
// of NAME=value strings for the child: for a name that holds a quote or a space.
run_result tt_runv(char *const argv[], char *const env[]);
void       tt_run_free(run_result *r);

// The splitter's rules, all of them: blanks (space, tab, newline) separate words; a '...' or "..."
// run is part of the word it touches, with its blanks kept and its quotes dropped ('' alone is an
// empty word). Nothing else is special: no $, `, \, *, ?, ~, <, >, |, ; or & has any meaning, so
// `echo $(touch M)` passes the word "$(touch M)" to echo. Returns the number of words and sets
// *words to them (NULL-terminated, free with tt_split_free), or -1 on an unclosed quote.
int  tt_split(const char *cmd, char ***words);
void tt_split_free(char **words);

// Starts argv without a shell: stdin from /dev/null, stdout to the file out and stderr to err
// (created or truncated; NULL is /dev/null; err equal to out writes both to the one file),
// env as for tt_runv. Returns the child's pid (-1 if it could not fork); tt_wait gives its exit
// status (-1 if a signal ended it). tt_call is the two together. All of them refuse a shell given a
// command line (sh, bash, dash, ksh or zsh with -c, -ec, ...: pid -1, rc -1, and a line saying so);
// a script file is run by its #! line or as `sh FILE`.
pid_t tt_spawn(char *const argv[], char *const env[], const char *out, const char *err);
int   tt_wait(pid_t pid);
int   tt_call(char *const argv[], char *const env[], const char *out, const char *err);

// The whole file as a NUL-terminated string (an empty string if it cannot be read). Caller frees.
char *tt_slurp(const char *path);
int   tt_count_lines(const char *s);   // lines in s; an unterminated last line counts
int   tt_exists(const char *path);

// Removes a dump folder written by ./generate --dump: the files its manifest names, the manifest,
// tokens.txt, then the folder.
void tt_remove_dump(const char *dir);

// mkdir -p and rm -rf without a shell: tt_mkdir_p makes path and the folders above it (0 if it is
// a folder after, -1 if not); tt_remove_tree removes path and, if it is a folder, everything in it
// (symbolic links removed, not followed; 0 also when path did not exist, -1 on any failure).
int tt_mkdir_p(const char *path);
// A scratch file name for a suite: $TMPDIR (else /tmp) + "/tw_test_SUITE_PID_TAG". The pid keeps
// two runs of the suite (make test and make asan side by side) apart; the tag, one file apart
// from another of the same test.
void tt_tmp_path(char *out, size_t len, const char *suite, const char *tag);
// stories260K grown with the chat template's three special tokens (./add-tokens), in a fresh
// folder made under $TMPDIR (else /tmp) from `tag`: dir (512), model and tok (600 each) receive
// the folder and the two files' paths. 0, or -1 with the reason (at most why_len) in why.
int tt_make_chat_model(char dir[512], char model[600], char tok[600], const char *tag, char *why,
                       size_t why_len);
// Writes text to a new file at path (replacing one there): 0, or -1 if it cannot be written.
int tt_write_text(const char *path, const char *text);
int tt_remove_tree(const char *path);

// The losses X of the `step N/M loss X` lines that ./train and ./train-mpi print, in the order of
// their steps (N = 1, 2, ... at the start of a line); fills at most max and returns how many.
int tt_parse_losses(double *loss, int max, const char *out);
// Whether out prints exactly n such losses and each is want[i] within rel relatively (./train
// prints 6 significant digits, so 1e-5 is the tightest that a correct run always meets); if not,
// says which step and by how much in why.
int tt_losses_printed(const char *out, const float *want, int n, double rel, char *why, size_t why_len);

#endif
