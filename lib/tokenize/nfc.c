// nfc.c: NFC in three passes over code points (UAX #15, section 3): decompose every code point
// fully (tables, or the Hangul arithmetic), sort each run of combining marks by class (stable),
// then compose each mark with the last starter unless an earlier mark of the same or higher class
// sits between them ("blocked").
#include "tokenize/nfc.h"
#include "tokenize/nfc_tables.h"

// Hangul syllables are composed of jamo by arithmetic (Unicode, section 3.12).
enum { S_BASE = 0xAC00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11A7,
       L_COUNT = 19, V_COUNT = 21, T_COUNT = 28, N_COUNT = V_COUNT * T_COUNT,
       S_COUNT = L_COUNT * N_COUNT };

int tw_nfc_ccc(uint32_t cp) {
    if (cp < 0x300) return 0;
    int lo = 0, hi = tw_nfc_ccc_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < tw_nfc_ccc_table[mid][0]) hi = mid - 1;
        else if (cp > tw_nfc_ccc_table[mid][0]) lo = mid + 1;
        else return (int)tw_nfc_ccc_table[mid][1];
    }
    return 0;
}

// Appends the full canonical decomposition of cp to out; returns how many code points.
static size_t decompose(uint32_t *out, uint32_t cp) {
    if (cp >= S_BASE && cp < S_BASE + S_COUNT) {
        uint32_t s = cp - S_BASE, t = s % T_COUNT;
        out[0] = L_BASE + s / N_COUNT;
        out[1] = V_BASE + (s % N_COUNT) / T_COUNT;
        if (t == 0) return 2;
        out[2] = T_BASE + t;
        return 3;
    }
    if (cp >= 0xC0) {
        int lo = 0, hi = tw_nfc_decomp_count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            if (cp < tw_nfc_decomp[mid][0]) hi = mid - 1;
            else if (cp > tw_nfc_decomp[mid][0]) lo = mid + 1;
            else {
                const uint32_t *d = tw_nfc_decomp_pool + tw_nfc_decomp[mid][1];
                uint32_t len = tw_nfc_decomp[mid][2];
                for (uint32_t i = 0; i < len; i++) out[i] = d[i];
                return len;
            }
        }
    }
    out[0] = cp;
    return 1;
}

// The primary composite of (a, b), or 0 if they do not compose.
static uint32_t compose(uint32_t a, uint32_t b) {
    if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE && b < V_BASE + V_COUNT)
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
    if (a >= S_BASE && a < S_BASE + S_COUNT && (a - S_BASE) % T_COUNT == 0 &&
        b > T_BASE && b < T_BASE + T_COUNT)
        return a + (b - T_BASE);
    int lo = 0, hi = tw_nfc_compose_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const uint32_t *e = tw_nfc_compose[mid];
        if (a < e[0] || (a == e[0] && b < e[1])) hi = mid - 1;
        else if (a > e[0] || b > e[1]) lo = mid + 1;
        else return e[2];
    }
    return 0;
}

int tw_nfc_trivially_normal(const uint32_t *in, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (in[i] >= 0x300) return 0;
    return 1;
}

size_t tw_nfc(uint32_t *out, const uint32_t *in, size_t n) {
    // 1. Decompose.
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += decompose(out + m, in[i]);
    // 2. Canonical order: insertion sort of each run of non-starters by class (stable).
    for (size_t i = 1; i < m; i++) {
        int c = tw_nfc_ccc(out[i]);
        if (c == 0) continue;
        size_t j = i;
        uint32_t x = out[i];
        while (j > 0 && tw_nfc_ccc(out[j - 1]) > c) { out[j] = out[j - 1]; j--; }
        out[j] = x;
    }
    // 3. Compose in place: `starter` is where the last starter was written, last_ccc the class
    // of the last code point written after it (256: blocked, no starter yet).
    if (m == 0) return 0;
    size_t starter = 0, w = 1;
    int last_ccc = tw_nfc_ccc(out[0]) == 0 ? 0 : 256;
    for (size_t i = 1; i < m; i++) {
        uint32_t ch = out[i];
        int c = tw_nfc_ccc(ch);
        uint32_t comp = last_ccc == 256 ? 0 : compose(out[starter], ch);
        if (comp && (last_ccc < c || last_ccc == 0)) {
            out[starter] = comp;
            continue;
        }
        if (c == 0) starter = w;
        last_ccc = c;
        out[w++] = ch;
    }
    return w;
}
