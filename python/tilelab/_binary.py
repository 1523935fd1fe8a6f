"""Finding and running the ``tilelab`` binary."""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


class TilelabError(Exception):
    """A one-line error from tilelab or from preparing its input (what went wrong and what to
    do); never a traceback from inside tilelab."""


def binary():
    """The ``tilelab`` executable: ``$TILELAB_BIN``, else the one the wheel installed beside this
    Python (its scripts folder, also when the environment is not activated), else ``tilelab`` on
    PATH, else a build of the repository this package sits in (``target/release`` then
    ``target/debug``).

    Raises :class:`TilelabError` when there is none.
    """
    env = os.environ.get("TILELAB_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise TilelabError(f"TILELAB_BIN={env!r} is not an executable file")
        return env
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        p = os.path.join(d or "", "tilelab")
        if d and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    found = shutil.which("tilelab")
    if found:
        return found
    repo = Path(__file__).resolve().parents[2]
    for p in (repo / "target" / "release" / "tilelab", repo / "target" / "debug" / "tilelab"):
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    raise TilelabError(
        "the tilelab binary is not installed: pip install ./python from the tilelab repository "
        "(or set TILELAB_BIN to a built target/release/tilelab)"
    )


def run(args, timeout=600):
    """Runs ``tilelab ARGS``; its stdout, or :class:`TilelabError` with its one-line error."""
    try:
        p = subprocess.run([binary(), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TilelabError(f"tilelab {' '.join(map(str, args[:2]))} ran longer than {timeout} s") from None
    if p.returncode != 0:
        msg = p.stderr.strip().splitlines()
        line = msg[-1] if msg else f"exit status {p.returncode}"
        raise TilelabError(line.removeprefix("tilelab: error: "))
    return p.stdout


def run_launch(launch_file, *extra, file_hints=None):
    """``tilelab ptx --launch LAUNCH_FILE --json`` (``extra``: more flags, which override the
    file's); the :class:`~tilelab.report.Report`."""
    from .report import Report

    out = run(["ptx", "--launch", str(launch_file), "--json", *extra])
    try:
        doc = json.loads(out)
    except ValueError:
        raise TilelabError("tilelab ptx --json printed something that is not JSON") from None
    return Report(doc, launch_file=str(launch_file), file_hints=file_hints)
