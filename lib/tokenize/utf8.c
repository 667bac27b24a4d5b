// utf8.c: the WHATWG UTF-8 decoder written as a loop over lead bytes: a lead byte fixes how many
// continuation bytes follow and the range the first of them must lie in (which rules out
// overlong forms, surrogates and code points above U+10FFFF); a byte outside that range ends the
// bad sequence without being consumed.
#include "tokenize/utf8.h"

size_t tw_utf8_decode(uint32_t *cps, const char *s, size_t len) {
    const unsigned char *b = (const unsigned char *)s;
    size_t i = 0, n = 0;
    while (i < len) {
        unsigned c = b[i++];
        if (c < 0x80) { cps[n++] = c; continue; }
        int need;
        unsigned lo = 0x80, hi = 0xBF;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 2; cp = c & 0x0F;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3; cp = c & 0x07;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else { cps[n++] = TW_UTF8_REPLACEMENT; continue; }
        int ok = 1;
        for (int k = 0; k < need; k++) {
            if (i >= len || b[i] < lo || b[i] > hi) { ok = 0; break; }
            cp = (cp << 6) | (b[i++] & 0x3Fu);
            lo = 0x80; hi = 0xBF;
        }
        cps[n++] = ok ? cp : TW_UTF8_REPLACEMENT;
    }
    return n;
}

size_t tw_utf8_put(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
