// nfc.h: Unicode Normalization Form C (UAX #15) on an array of code points, as Qwen3's
// tokenizer.json asks for ("normalizer": {"type": "NFC"}) before it splits the text: canonical
// decomposition, canonical ordering of combining marks, then canonical composition. So
// "e" + U+0301 (combining acute) becomes "é" (U+00E9), and U+212B (Angstrom sign) becomes U+00C5.
#ifndef TW_NFC_H
#define TW_NFC_H
#include <stddef.h>
#include <stdint.h>

// Most code points the NFC of n code points can have: a code point decomposes into at most 4
// (U+1D160 and Hangul give 3; the tables hold at most 4), and composition only shortens.
#define TW_NFC_MAX_GROWTH 4

// The canonical combining class of cp (0 for starters).
int tw_nfc_ccc(uint32_t cp);

// Writes NFC(in) to out and returns its length.
//   in:  (n) code points;  out: (TW_NFC_MAX_GROWTH * n) code points, must not overlap in.
size_t tw_nfc(uint32_t *out, const uint32_t *in, size_t n);

// 1 if NFC(in) is in itself for sure (every code point below U+0300, where nothing decomposes,
// combines or reorders): the fast path that skips tw_nfc for ASCII and Latin-1 text.
int tw_nfc_trivially_normal(const uint32_t *in, size_t n);

#endif
