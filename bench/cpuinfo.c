// cpuinfo.c: see cpuinfo.h. Reads the first processor's block of /proc/cpuinfo (x86: vendor_id,
// model name, cpu family, model; Arm: CPU implementer, CPU part) and counts the processors.
#include <stdio.h>
#include <string.h>
#include "cpuinfo.h"

// The value after "key<spaces>: " on `line` into out, if the line starts with key.
static int field(const char *line, const char *key, char *out, size_t n) {
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || (line[k] != ' ' && line[k] != '\t' && line[k] != ':')) return 0;
    const char *colon = strchr(line, ':');
    if (!colon) return 0;
    snprintf(out, n, "%s", colon[1] == ' ' ? colon + 2 : colon + 1);
    out[strcspn(out, "\n")] = '\0';
    return 1;
}

void bench_cpu_describe(char *buf, size_t n) {
    snprintf(buf, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");   // Linux only
    if (!f) return;
    enum { F = 160 };   // every field buffer the same size, so copying one into another fits
    char line[512], vendor[F] = "", name[F] = "", fam[F] = "", model[F] = "", impl[F] = "",
         part[F] = "", tmp[F];
    int cpus = 0;
    while (fgets(line, sizeof line, f)) {
        if (field(line, "processor", tmp, sizeof tmp)) cpus++;
        if (cpus > 1) continue;   // the first processor's fields only
        if (field(line, "vendor_id", tmp, sizeof tmp)) snprintf(vendor, sizeof vendor, "%s", tmp);
        else if (field(line, "model name", tmp, sizeof tmp)) snprintf(name, sizeof name, "%s", tmp);
        else if (field(line, "cpu family", tmp, sizeof tmp)) snprintf(fam, sizeof fam, "%s", tmp);
        else if (field(line, "model", tmp, sizeof tmp)) snprintf(model, sizeof model, "%s", tmp);
        else if (field(line, "CPU implementer", tmp, sizeof tmp)) snprintf(impl, sizeof impl, "%s", tmp);
        else if (field(line, "CPU part", tmp, sizeof tmp)) snprintf(part, sizeof part, "%s", tmp);
    }
    fclose(f);
    if (vendor[0] || name[0])
        snprintf(buf, n, "%s, %s, family %s model %s, %d logical CPUs", vendor[0] ? vendor : "?",
                 name[0] ? name : "?", fam[0] ? fam : "?", model[0] ? model : "?", cpus);
    else if (impl[0])
        snprintf(buf, n, "Arm implementer %s part %s, %d logical CPUs", impl, part[0] ? part : "?", cpus);
}
