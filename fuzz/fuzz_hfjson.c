// fuzz_hfjson.c: libFuzzer target for the tokenizer.json reader (tw_bbpe_load_hf), and for
// encode/decode with whatever vocabulary a hostile file holds (fuzz_bbpe_check.h).
// Input layout: uint16 n (little-endian), n bytes of text to encode, then the tokenizer.json.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include "fuzz_file.h"
#include "fuzz_bbpe_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t n = (size_t)(data[0] | data[1] << 8);
    data += 2; size -= 2;
    if (n > size) n = size;
    const char *path = fuzz_write_file(data + n, size - n);
    tw_bbpe t;
    char err[512] = "";
    tw_status st = tw_bbpe_load_hf(&t, path, err, sizeof err);
    if (st == TW_OK) {
        fuzz_bbpe_check(&t, (const char *)data, n);
        fuzz_bbpe_check(&t, "the <|end|> in\xff \xc3\xa9" "e\xcc\x81  \n\n x", 24);
        tw_bbpe_free(&t);
    } else if (err[0] == '\0') {
        abort();   // a failure must say why
    }
    return 0;
}
