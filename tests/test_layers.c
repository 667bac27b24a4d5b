// test_layers.c: the include-direction check of lib/ (tools/check_layers.sh, also run on its own
// by `make check-layers` as part of `make test`). It passes on the real lib/, and it fails, naming
// each broken rule, on a small fake tree whose files break one rule each: so the check is known to
// be able to fail. The same for the check that file names in comments exist
// (tools/check_file_refs.sh, `make check-file-refs`).
#define _POSIX_C_SOURCE 200809L   // mkdtemp
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testrun.h"

static void write_file(const char *dir, const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(tt_write_text(path, text) == 0, "cannot write %s", path);
}

START_TEST(lib_includes_point_one_way)
{
    run_result r = tt_run("sh tools/check_layers.sh lib");
    ck_assert_msg(r.rc == 0, "tools/check_layers.sh lib failed:\n%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "every include points down"));
    tt_run_free(&r);
}
END_TEST

START_TEST(the_check_names_every_broken_rule)
{
    char tmpl[] = "/tmp/tw-layers-XXXXXX", cmd[512];
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char dir[128];
    const char *sub[] = { "nn", "formats", "misc", "simd" };
    for (int i = 0; i < 4; i++) {
        snprintf(dir, sizeof dir, "%s/%s", tmpl, sub[i]);
        ck_assert_int_eq(tt_mkdir_p(dir), 0);
    }
    snprintf(dir, sizeof dir, "%s/nn", tmpl);
    write_file(dir, "good.c", "#include <math.h>\n#include \"nn/good.h\"\n#include \"simd/simd.h\"\n");
    write_file(dir, "up.c", "#include \"nn/good.h\"\n#include \"formats/npy.h\"\n");   // nn -> formats
    write_file(dir, "real.h", "#include \"formats/llama2c.h\"\n");                    // nn -> formats
    write_file(dir, "bare.c", "#include \"block.h\"\n");                           // no folder
    write_file(dir, "linear.c", "#include \"quant/q8_0.h\"\n");                    // the one seam
    write_file(dir, "norm.c", "#include \"quant/q8_0.h\"\n");                      // not the seam
    snprintf(dir, sizeof dir, "%s/formats", tmpl);
    write_file(dir, "umbrella.c", "#include \"tw.h\"\n");                          // tw.h
    write_file(dir, "fine.c", "#include \"core/status.h\"\n#include \"formats/npy.h\"\n");
    write_file(dir, "loop.c", "#include \"train/step.h\"\n");                      // formats -> train
    snprintf(dir, sizeof dir, "%s/misc", tmpl);
    write_file(dir, "x.c", "#include \"core/status.h\"\n");                        // unknown folder
    snprintf(dir, sizeof dir, "%s/simd", tmpl);
    write_file(dir, "k.c", "#include \"simd.h\"\n#include \"nn/softmax.h\"\n");          // simd -> nn
    write_file(dir, "ok.c", "#include \"simd.h\"\n#include \"simd/q8.h\"\n");          // simd -> simd
    snprintf(cmd, sizeof cmd, "sh tools/check_layers.sh %s", tmpl);
    run_result r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);
    const char *want[] = { "nn/up.c:2: a nn/ file includes formats/npy.h",
                           "nn/real.h:1: a nn/ file includes formats/llama2c.h",
                           "nn/bare.c:1: include \"block.h\" names no folder",
                           "nn/norm.c:1: a nn/ file includes quant/q8_0.h",
                           "formats/umbrella.c:1 includes tw.h",
                           "formats/loop.c:1: a formats/ file includes train/step.h",
                           "misc/x.c: folder misc/ is not in the order",
                           "simd/k.c:2: a simd/ file includes nn/softmax.h" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.err, want[i]) != NULL, "no line \"%s\" in:\n%s", want[i], r.err);
    ck_assert_msg(strstr(r.err, "good.c") == NULL && strstr(r.err, "fine.c") == NULL &&
                  strstr(r.err, "ok.c") == NULL && strstr(r.err, "linear.c") == NULL,
                  "a file that follows the rules was reported:\n%s", r.err);
    tt_run_free(&r);
    ck_assert_int_eq(tt_remove_tree(tmpl), 0);
}
END_TEST

// ---- tools/check_file_refs.sh: file names in comments and docs ----

START_TEST(every_file_name_in_comments_exists)
{
    run_result r = tt_run("sh tools/check_file_refs.sh .");
    ck_assert_msg(r.rc == 0, "tools/check_file_refs.sh found stale names:\n%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "exists"));
    tt_run_free(&r);
}
END_TEST

START_TEST(the_check_names_every_stale_mention)
{
    char tmpl[] = "/tmp/tw-refs-XXXXXX", cmd[512], dir[128];
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    const char *sub[] = { "lib/nn", "docs", "tools", "tests" };
    for (int i = 0; i < 4; i++) {
        snprintf(dir, sizeof dir, "%s/%s", tmpl, sub[i]);
        ck_assert_int_eq(tt_mkdir_p(dir), 0);
    }
    snprintf(dir, sizeof dir, "%s/lib/nn", tmpl);
    write_file(dir, "a.c", "// see nn/a.c and lib/nn/a.c, and llama2.c's run.c\n"   // all exist
                           "// moved from lib/old/gone.c\n"                         // line 2
                           "/* a block comment\n"
                           "   that names gone.h */ int x;\n"                      // line 4
                           "#include <stdio.h>\n"
                           "const char *s = \"string.c\"; // <stdlib.h>, q8_*.c\n");  // not names
    snprintf(dir, sizeof dir, "%s/docs", tmpl);
    write_file(dir, "x.md", "the reader is `lib/nn/b.c`\n");
    snprintf(dir, sizeof dir, "%s/tools", tmpl);
    write_file(dir, "y.sh", "# runs missing.sh\necho command.c\n");
    snprintf(dir, sizeof dir, "%s/tests", tmpl);
    write_file(dir, "t.py", "\"\"\"Docstring naming gone.py\nand more.\"\"\"\nx = self.h  # code\n");
    snprintf(cmd, sizeof cmd, "sh tools/check_file_refs.sh %s", tmpl);
    run_result r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);
    const char *want[] = { "lib/nn/a.c:2: lib/old/gone.c", "lib/nn/a.c:2: lib/old/",
                           "lib/nn/a.c:4: gone.h", "docs/x.md:1: lib/nn/b.c",
                           "tools/y.sh:1: missing.sh", "tests/t.py:1: gone.py" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.err, want[i]) != NULL, "no line \"%s\" in:\n%s", want[i], r.err);
    const char *not_names[] = { "a.c:1:", "string.c", "stdio.h", "stdlib.h", "q8_", "command.c",
                                "self.h" };
    for (size_t i = 0; i < sizeof not_names / sizeof not_names[0]; i++)
        ck_assert_msg(strstr(r.err, not_names[i]) == NULL, "\"%s\" was reported:\n%s",
                      not_names[i], r.err);
    tt_run_free(&r);
    ck_assert_int_eq(tt_remove_tree(tmpl), 0);
}
END_TEST

Suite *suite_layers(void) {
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("includes");
    // Generous: the check runs a shell pipeline per lib/ file (over a second on a loaded machine
    // beside the other suites, which make test runs at the same time); Check's default is 4 s.
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lib_includes_point_one_way);
    tcase_add_test(tc, the_check_names_every_broken_rule);
    suite_add_tcase(s, tc);
    tc = tcase_create("file_refs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_file_name_in_comments_exists);
    tcase_add_test(tc, the_check_names_every_stale_mention);
    suite_add_tcase(s, tc);
    return s;
}
