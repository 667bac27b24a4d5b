// gnuplot.h: drawing a picture with gnuplot without a shell. No file name ever reaches sh: the
// program is started with fork + execvp("gnuplot") (found on PATH like any command), and the
// names travel inside a small gnuplot script written to its standard input, each as a gnuplot
// single-quoted string. In those strings gnuplot does no backslash, backquote or @macro
// processing; the one special character, ', is written twice (gnuplot's own escape). A name with
// a newline or a carriage return cannot sit on one script line and is refused.
// Nothing here prints: the caller says what happened (and how to install gnuplot when missing).
#ifndef TW_GNUPLOT_H
#define TW_GNUPLOT_H
#include <stddef.h>

typedef enum {
    TW_GNUPLOT_DRAWN = 0,    // gnuplot ran the script and exited 0
    TW_GNUPLOT_MISSING,      // no gnuplot on PATH (or it could not be executed)
    TW_GNUPLOT_BAD_NAME,     // a name holds a newline or carriage return: nothing was started
    TW_GNUPLOT_FAILED,       // gnuplot started but exited non-zero or was killed (or fork/pipe failed)
} tw_gnuplot_result;

// Writes s into out as a gnuplot single-quoted string: 'it''s' for it's. Returns 1, or 0 (out
// holds "") if s holds '\n' or '\r' or out (len bytes with its NUL) is too small.
int tw_gnuplot_quote(char *out, size_t len, const char *s);

// 1 if an executable named gnuplot is on PATH (what execvp would run), 0 otherwise. No shell.
int tw_gnuplot_available(void);

// Runs gnuplot on the script file `script` (e.g. "viz/14_loss.gp") with datafile and outfile
// set first, as `gnuplot -e "datafile='D'; outfile='O'; EXTRA" SCRIPT` would, but without a
// shell: gnuplot reads from a pipe
//     datafile = 'D'
//     outfile = 'O'
//     EXTRA                      (only if extra is not NULL: gnuplot code chosen by the program,
//                                 never a user's name; it must not hold a newline)
//     load 'SCRIPT'
// datafile or outfile may be NULL (not set). show_output 1: gnuplot's stdout and stderr go to
// our stdout (in order with what we print: flush stdout first); 0: both go to /dev/null.
// Waits for gnuplot to finish. SIGPIPE is ignored while the script is written.
tw_gnuplot_result tw_gnuplot_run(const char *script, const char *datafile, const char *outfile,
                                 const char *extra, int show_output);

#endif
