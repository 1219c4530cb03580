"""Reading MATLAB .mat fields (as scipy.io.loadmat returns them) as plain Python values."""

import numpy as np


def strings(value):
    """Flattens a loadmat value (str, char array, cell array, nested) to a list of str."""
    if isinstance(value, (str, bytes)):
        return [value.decode("utf-8") if isinstance(value, bytes) else value]
    array = np.asarray(value)
    if array.dtype.kind in "US":
        return [str(v) for v in array.ravel()]
    if array.dtype == object:
        return [s for item in array.ravel() for s in strings(item)]
    return []


def string(value):
    """The first string of a loadmat value ("" when there is none)."""
    found = strings(value)
    return found[0] if found else ""


def load(path):
    """scipy.io.loadmat(path) with a clear ValueError when the file is missing or not a .mat."""
    import scipy.io

    try:
        return scipy.io.loadmat(path)
    except Exception as err:  # scipy raises several types for missing/bad files
        raise ValueError(f"cannot read MATLAB file {path!r}: {err}") from err
