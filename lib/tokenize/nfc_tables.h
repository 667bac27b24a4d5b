// nfc_tables.h: the Unicode data Normalization Form C needs, generated into nfc_tables.c by
// tools/tokenizers/gen_nfc_tables.py (the Unicode version is tw_nfc_unicode_version).
#ifndef TW_NFC_TABLES_H
#define TW_NFC_TABLES_H
#include <stdint.h>

extern const char     tw_nfc_unicode_version[];
extern const uint32_t tw_nfc_ccc_table[][2];        // (tw_nfc_ccc_count) (code point, class != 0), sorted
extern const int      tw_nfc_ccc_count;
extern const uint32_t tw_nfc_decomp[][3];     // (tw_nfc_decomp_count) (code point, pool offset, length)
extern const int      tw_nfc_decomp_count;
extern const uint32_t tw_nfc_decomp_pool[];   // full canonical decompositions, back to back
extern const uint32_t tw_nfc_compose[][3];    // (tw_nfc_compose_count) (first, second, composite)
extern const int      tw_nfc_compose_count;

#endif
