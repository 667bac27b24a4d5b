// utf8.h: UTF-8 to code points the way a web browser (and Node.js's TextDecoder and
// Buffer.toString) reads bytes: every maximal invalid subsequence becomes one U+FFFD (WHATWG
// Encoding standard, "UTF-8 decode"). So the C encoders see exactly the string a JavaScript
// reference encoder receives when it is handed the same bytes.
#ifndef TW_UTF8_H
#define TW_UTF8_H
#include <stddef.h>
#include <stdint.h>

#define TW_UTF8_REPLACEMENT 0xFFFDu

// Decodes s[0..len) into cps (capacity len: never more code points than bytes); returns how many.
size_t tw_utf8_decode(uint32_t *cps, const char *s, size_t len);

// Writes cp as UTF-8 into out (room for 4 bytes); returns the byte count (1..4).
size_t tw_utf8_put(char *out, uint32_t cp);

#endif
