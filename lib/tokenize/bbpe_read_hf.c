// bbpe_read_hf.c: reads a Hugging Face tokenizer.json whose model is byte-level BPE (Qwen2/Qwen3,
// GPT-2's own tokenizer.json, ...) into a tw_bbpe. What is read:
//   model:         {"type": "BPE", "vocab": {piece: id, ...}, "merges": ["a b", ...] or [["a","b"], ...]}
//   added_tokens:  [{"id": N, "content": "<|im_start|>", ...}, ...]
//   normalizer:    null or {"type": "NFC"}
//   pre_tokenizer: Qwen2/3's Sequence of Split (its pattern, exactly) and ByteLevel without its
//                  own regex; or a ByteLevel with use_regex true (GPT-2's pattern).
// Anything else (another model type, byte fallback, another pattern or normaliser) is refused by
// name rather than encoded differently from the reference.
#include <stdio.h>
#include <string.h>
#include "formats/json.h"
#include "tokenize/bbpe.h"
#include "tokenize/bbpe_read.h"

#define QWEN_PATTERN "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

static const char *str_member(const tw_json *obj, const char *key) {
    const tw_json *v = tw_json_get(obj, key);
    return v && v->type == TW_JSON_STRING ? v->string : NULL;
}

static int is_type(const tw_json *obj, const char *type) {
    const char *s = str_member(obj, "type");
    return s && strcmp(s, type) == 0;
}

// The pre-tokenizer kind, or -1 if this reader does not know it.
static int pretok_kind(const tw_json *pre) {
    if (!pre || pre->type != TW_JSON_OBJECT) return -1;
    if (is_type(pre, "ByteLevel")) {
        const tw_json *r = tw_json_get(pre, "use_regex"), *a = tw_json_get(pre, "add_prefix_space");
        int regex = !r || (r->type == TW_JSON_BOOL && r->boolean);
        int prefix = a && a->type == TW_JSON_BOOL && a->boolean;
        return regex && !prefix ? TW_PRETOK_GPT2 : -1;
    }
    if (!is_type(pre, "Sequence")) return -1;
    const tw_json *seq = tw_json_get(pre, "pretokenizers");
    if (!seq || seq->type != TW_JSON_ARRAY || seq->count != 2) return -1;
    const tw_json *split = &seq->items[0], *bl = &seq->items[1];
    const tw_json *pat = tw_json_get(split, "pattern");
    const char *regex = str_member(pat, "Regex"), *behavior = str_member(split, "behavior");
    const tw_json *invert = tw_json_get(split, "invert"), *r = tw_json_get(bl, "use_regex");
    const tw_json *a = tw_json_get(bl, "add_prefix_space");
    if (!is_type(split, "Split") || !regex || strcmp(regex, QWEN_PATTERN) != 0 ||
        !behavior || strcmp(behavior, "Isolated") != 0 || (invert && (invert->type != TW_JSON_BOOL || invert->boolean)))
        return -1;
    if (!is_type(bl, "ByteLevel") || !r || r->type != TW_JSON_BOOL || r->boolean ||
        (a && (a->type != TW_JSON_BOOL || a->boolean)))
        return -1;
    return TW_PRETOK_QWEN;
}

// Checks the parts of "model" this reader does not implement are off.
static const char *model_unsupported(const tw_json *model) {
    const tw_json *bf = tw_json_get(model, "byte_fallback");
    if (bf && !(bf->type == TW_JSON_NULL || (bf->type == TW_JSON_BOOL && !bf->boolean)))
        return "model.byte_fallback is on (not a byte-level BPE this reader knows)";
    const char *keys[] = { "continuing_subword_prefix", "end_of_word_suffix" };
    for (int i = 0; i < 2; i++) {
        const tw_json *v = tw_json_get(model, keys[i]);
        if (v && !(v->type == TW_JSON_NULL || (v->type == TW_JSON_STRING && v->len == 0)))
            return "model has a subword prefix or suffix (not a byte-level BPE this reader knows)";
    }
    const tw_json *d = tw_json_get(model, "dropout");
    if (d && d->type != TW_JSON_NULL) return "model.dropout is set (encoding would be random)";
    return NULL;
}

static tw_status fail(tw_bbpe *t, char *err, size_t err_len, const char *path, const char *what,
                      tw_status st) {
    tw_bbpe_free(t);
    tw_set_err(err, err_len, "%s: %s", path, what);
    return st;
}

tw_status tw_bbpe_load_hf(tw_bbpe *t, const char *path, char *err, size_t err_len) {
    memset(t, 0, sizeof *t);
    tw_json *root = NULL;
    tw_status st = tw_json_read_file(&root, path, err, err_len);
    if (st != TW_OK) return st;
    const tw_json *model = tw_json_get(root, "model");
    const tw_json *vocab = tw_json_get(model, "vocab"), *merges = tw_json_get(model, "merges");
    const tw_json *added = tw_json_get(root, "added_tokens"), *norm = tw_json_get(root, "normalizer");
    const char *bad = NULL;
    int kind = -1;
    if (!model || model->type != TW_JSON_OBJECT)
        bad = "no \"model\" object: not a Hugging Face tokenizer.json";
    else if (str_member(model, "type") && !is_type(model, "BPE"))
        bad = "model.type is not \"BPE\": only byte-level BPE tokenizers are read";
    else if (!vocab || vocab->type != TW_JSON_OBJECT)
        bad = "model.vocab is missing or not an object of piece: id";
    else if (!merges || merges->type != TW_JSON_ARRAY)
        bad = "model.merges is missing or not an array";
    else if (added && added->type != TW_JSON_ARRAY && added->type != TW_JSON_NULL)
        bad = "added_tokens is not an array";
    else if (norm && norm->type != TW_JSON_NULL && !is_type(norm, "NFC"))
        bad = "normalizer is not null or NFC: this reader knows no other";
    else if ((kind = pretok_kind(tw_json_get(root, "pre_tokenizer"))) < 0)
        bad = "pre_tokenizer is not Qwen2/3's Split pattern nor GPT-2's ByteLevel: unsupported";
    else
        bad = model_unsupported(model);
    if (bad) { tw_json_free(root); return fail(t, err, err_len, path, bad, TW_ERR_FORMAT); }

    tw_bbpe_source src = { vocab, merges, added && added->type == TW_JSON_ARRAY ? added : NULL, NULL, 0 };
    int nfc = norm && norm->type != TW_JSON_NULL;
    st = tw_bbpe_build(t, &src, &bad);
    tw_json_free(root);
    if (st != TW_OK) return fail(t, err, err_len, path, bad ? bad : tw_status_str(st), st);
    t->nfc = nfc;
    t->pretok = (tw_pretok_kind)kind;
    return TW_OK;
}
