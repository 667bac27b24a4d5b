// source_name.c: the path of the exercise file a binary was built from (your stub, the solution
// or a wrong attempt), so the checker names the file actually built. mk/exercises.mk and
// mk/simd.mk compile it beside each exercise with -DEX_SOURCE="lessons/exercises/...".
#ifndef EX_SOURCE
#error "build with -DEX_SOURCE=\"path\" (make exerciseN does)"
#endif
const char ex_source_file[] = EX_SOURCE;
