// fuzz_npy.c: libFuzzer target for tw_npy_read. Any byte string must give TW_OK or an error with
// a message, never a crash, an out-of-bounds read or a leak; an accepted array must hold exactly
// the elements its shape says.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include "fuzz_file.h"
#include "formats/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    tw_npy a;
    char err[256] = "";
    tw_status st = tw_npy_read(&a, path, err, sizeof err);
    if (st == TW_OK) {
        long count = 1;
        for (int i = 0; i < a.ndim; i++) count *= a.shape[i];
        if (count != a.count || a.data == NULL) abort();
        // Touch every element so ASan sees a short buffer.
        volatile uint32_t sum = 0;
        const uint8_t *p = a.data;
        for (long i = 0; i < a.count * 4; i++) sum += p[i];
        (void)sum;
        tw_npy_free(&a);
    } else if (st == TW_ERR_FORMAT && err[0] == '\0') {
        abort();   // every format error must say what is wrong
    }
    return 0;
}
