"""Executes one notebook of notebooks/ top to bottom with Debian's nbclient (label notebooks).

The notebooks assert the figures they show in their own cells: a failing assertion, an
exception or a cell that runs past the timeout fails the test. The kernel is the interpreter
running this script (Debian's /usr/bin/python3 with ipykernel), in the notebook's directory,
with the environment CTest gives (PYTHONPATH: the build tree's waitlab package; WAITLAB_BIN:
its waitlab executable) and WAITLAB_HEADLESS=1: no front end will move a slider (Debian's
nbclient 0.7 cannot even take ipywidgets 6's messages), so a notebook makes none. The notebook file is read, never written: its outputs stay empty in git.
Usage: run_notebook.py NOTEBOOK.ipynb
"""
import os
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main(path):
    os.environ["WAITLAB_HEADLESS"] = "1"  # the kernel inherits it
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"{path}: a cell failed:\n{e}", file=sys.stderr)
        return 1
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    print(f"{path}: {cells} code cells ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
