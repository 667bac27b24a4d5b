// hf_rope_scaling.c: config.json's "rope_scaling" (hf_rope_scaling.h).
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "formats/hf_rope_scaling.h"

// A member of obj that is present and not null, or NULL.
static const tw_json *member(const tw_json *obj, const char *key) {
    const tw_json *v = tw_json_get(obj, key);
    return v && v->type != TW_JSON_NULL ? v : NULL;
}

// Reads obj[key] as a finite number into *out (left alone when absent). 0 with err on a bad value.
static int read_number(const tw_json *obj, const char *key, double *out, char *err, size_t n) {
    const tw_json *v = member(obj, key);
    if (!v) return 1;
    if (v->type != TW_JSON_NUMBER || !isfinite(v->number)) {
        snprintf(err, n, "\"rope_scaling\": \"%s\" must be a number, not a %s", key,
                 tw_json_type_name(v->type));
        return 0;
    }
    *out = v->number;
    return 1;
}

// The kind named by "rope_type" (or the older "type"); -1 with err when unknown.
static int read_kind(const tw_json *rs, char *err, size_t n) {
    const tw_json *t = member(rs, "rope_type");
    if (!t) t = member(rs, "type");
    if (!t) {
        snprintf(err, n, "\"rope_scaling\" has no \"rope_type\" (or \"type\"): give linear, ntk or yarn");
        return -1;
    }
    if (t->type != TW_JSON_STRING) {
        snprintf(err, n, "\"rope_scaling\": \"rope_type\" must be a string, not a %s",
                 tw_json_type_name(t->type));
        return -1;
    }
    if (strcmp(t->string, "default") == 0) return TW_ROPE_SCALING_NONE;
    const int k = tw_rope_scaling_from_name(t->string);
    if (k < 0)
        snprintf(err, n, "\"rope_scaling\": rope_type \"%.40s\" is not supported (linear, ntk, yarn)",
                 t->string);
    return k;
}

tw_status tw_hf_rope_scaling_from_json(tw_rope_scaling *sc, const tw_json *root, char *err,
                                       size_t err_len) {
    *sc = tw_rope_scaling_make(TW_ROPE_SCALING_NONE, 1.0f, 0);
    if (!root || root->type != TW_JSON_OBJECT) {
        snprintf(err, err_len, "the config is not a JSON object");
        return TW_ERR_FORMAT;
    }
    const tw_json *rs = member(root, "rope_scaling");
    if (!rs) return TW_OK;
    if (rs->type != TW_JSON_OBJECT) {
        snprintf(err, err_len, "\"rope_scaling\" must be an object or null, not a %s",
                 tw_json_type_name(rs->type));
        return TW_ERR_FORMAT;
    }
    const int kind = read_kind(rs, err, err_len);
    if (kind < 0) return TW_ERR_FORMAT;
    if (kind == TW_ROPE_SCALING_NONE) return TW_OK;
    double factor = NAN, original = 0.0, beta_fast = 32.0, beta_slow = 1.0;
    const tw_json *mp = member(root, "max_position_embeddings");
    if (mp && mp->type == TW_JSON_NUMBER) original = mp->number;
    if (!read_number(rs, "factor", &factor, err, err_len) ||
        !read_number(rs, "original_max_position_embeddings", &original, err, err_len) ||
        !read_number(rs, "beta_fast", &beta_fast, err, err_len) ||
        !read_number(rs, "beta_slow", &beta_slow, err, err_len))
        return TW_ERR_FORMAT;
    if (!(factor >= 1.0 && factor <= 1e6)) {
        snprintf(err, err_len, "\"rope_scaling\": \"factor\" must be a number from 1 to 1e6%s",
                 isnan(factor) ? " (it is missing)" : "");
        return TW_ERR_FORMAT;
    }
    if (kind == TW_ROPE_SCALING_YARN && !(original >= 1.0 && original <= (1 << 30) && original == floor(original))) {
        snprintf(err, err_len, "\"rope_scaling\": yarn needs \"original_max_position_embeddings\" "
                 "(or a top-level \"max_position_embeddings\"), a whole number from 1 to 2^30");
        return TW_ERR_FORMAT;
    }
    if (!(beta_fast > 0.0 && beta_fast <= 1e6 && beta_slow > 0.0 && beta_slow < beta_fast)) {
        snprintf(err, err_len, "\"rope_scaling\": beta_slow (%g) and beta_fast (%g) must satisfy "
                 "0 < beta_slow < beta_fast <= 1e6", beta_slow, beta_fast);
        return TW_ERR_FORMAT;
    }
    *sc = tw_rope_scaling_make((tw_rope_scaling_kind)kind, (float)factor,
                               original >= 1.0 && original <= (1 << 30) ? (int)original : 0);
    sc->beta_fast = (float)beta_fast;
    sc->beta_slow = (float)beta_slow;
    if (tw_rope_scaling_check(sc) != TW_OK) {   // (the checks above cover it)
        snprintf(err, err_len, "\"rope_scaling\": not a valid scaling");
        return TW_ERR_FORMAT;
    }
    return TW_OK;
}

tw_status tw_hf_rope_scaling_read_file(tw_rope_scaling *sc, const char *path, char *err,
                                       size_t err_len) {
    *sc = tw_rope_scaling_make(TW_ROPE_SCALING_NONE, 1.0f, 0);
    tw_json *root = NULL;
    tw_status st = tw_json_read_file(&root, path, err, err_len);   // err names the path
    if (st == TW_OK) {
        char why[256] = "";
        st = tw_hf_rope_scaling_from_json(sc, root, why, sizeof why);
        if (st != TW_OK) snprintf(err, err_len, "%s: %s", path, why);
    }
    tw_json_free(root);
    return st;
}
