"""tilelab from Python: run the simulator on a kernel and read its report.

``tilelab.triton.analyze`` compiles a Triton kernel on the CPU (no GPU), writes a launch file
and runs ``tilelab ptx --launch FILE --json``; :class:`Report` is what comes back.
:func:`run_launch` runs an existing launch file (docs/launch-files.md). Every failure is a
:class:`TilelabError` with a one-line message saying what to do.
"""
from ._binary import TilelabError, binary, run_launch
from .report import Report

__all__ = ["TilelabError", "Report", "binary", "run_launch"]
