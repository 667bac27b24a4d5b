"""golden_io.py: the one way the golden generators (gen_core.py, gen_model.py, gen_stories.py)
write a tensor: float32 or int32, C order, NumPy format 1.0 - what lib/formats/npy.c reads."""
import os

import numpy as np


def save_npy(path, arr):
    """Writes arr (numpy array, torch tensor or nested list) to path and returns path.
    float64 is rounded to float32 and int64 narrowed to int32; anything else is refused."""
    if hasattr(arr, "detach"):          # a torch tensor
        arr = arr.detach().numpy()
    a = np.array(arr, order="C")        # (np.ascontiguousarray would turn a 0-d array into 1-d)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    if a.dtype == np.int64:
        a = a.astype(np.int32)
    assert a.dtype in (np.float32, np.int32), (path, a.dtype)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    np.save(path, a)
    return path
