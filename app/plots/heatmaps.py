# What the heat-map pictures share (idlewave.py, footprint.py): merging the cells of a matrix that
# share a pixel. Not a plot script: app/embed_plots.cmake puts its text in place of the line that
# imports it in each script compiled into the binary (which runs a script with `python -c`, where
# nothing beside it can be imported); a script run or imported from this directory imports it.
import numpy as np


def pool_max(m, rows, cols):
    """m reduced to at most rows × cols cells, each the maximum of the cells merged into it
    (consecutive blocks of nearly equal size); a matrix that fits is returned unchanged."""
    m = np.asarray(m)
    if m.ndim != 2 or m.size == 0:
        return m
    r = max(1, min(int(rows), m.shape[0]))
    c = max(1, min(int(cols), m.shape[1]))
    if r < m.shape[0]:
        m = np.maximum.reduceat(m, (np.arange(r) * m.shape[0]) // r, axis=0)
    if c < m.shape[1]:
        m = np.maximum.reduceat(m, (np.arange(c) * m.shape[1]) // c, axis=1)
    return m
