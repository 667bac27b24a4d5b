// npy.h: read and write NumPy .npy files (format version 1.0, little-endian, C order), so any
// tensor can be dumped from C and opened with numpy.load, and PyTorch goldens can be read back.
// Supported dtypes: float32 ('<f4') and int32 ('<i4').
#ifndef TW_NPY_H
#define TW_NPY_H
#include "core/status.h"

#define TW_NPY_MAX_DIMS 8

typedef enum { TW_NPY_F32 = 0, TW_NPY_I32 = 1 } tw_npy_dtype;

// An array read from a file. The reader allocates data; release it with tw_npy_free.
typedef struct {
    tw_npy_dtype dtype;
    int          ndim;
    long         shape[TW_NPY_MAX_DIMS];
    long         count;   // product of shape (1 for a 0-d array)
    void        *data;    // (count) float or int32_t
} tw_npy;

// Writes data with the given shape. The file is written to a temporary name beside path and
// renamed into place only when complete, so a failed write never leaves a half-written file.
tw_status tw_npy_write(const char *path, tw_npy_dtype dtype, const void *data,
                       const long *shape, int ndim);
tw_status tw_npy_write_f32(const char *path, const float *data, const long *shape, int ndim);
tw_status tw_npy_write_i32(const char *path, const int32_t *data, const long *shape, int ndim);

// Reads a whole file. On failure *a is zeroed and nothing needs freeing. If err is not NULL it
// receives a one-line English description of the problem (e.g. "fortran_order arrays are not
// supported; save with np.ascontiguousarray").
tw_status tw_npy_read(tw_npy *a, const char *path, char *err, size_t err_len);
void      tw_npy_free(tw_npy *a);   // safe on a zeroed struct; zeroes it again

#endif
