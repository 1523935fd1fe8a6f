"""``python -m tilelab.triton FILE.py:KERNEL --grid 4,4 --arg M=512 --arg a_ptr=*fp16
--constexpr BLOCK_M=128 [--num-warps 4] [--num-stages 3] [--target sm_90] [--cta X,Y,Z]
[--out-dir DIR] [--json]``: :func:`tilelab.triton.analyze` from the shell. Values: integers,
floats (with a dot or exponent), ``True``/``False``, pointer dtypes ``*fp16``; a ``--constexpr``
that is none of these is a string (``ACTIVATION=leaky_relu``, ``ACTIVATION=`` for ""). Prints the per-source-line table (or the report as JSON); an error is one
line on stderr and exit status 2.
"""
import argparse
import importlib.util
import json
import os
import sys

from .. import TilelabError
from . import analyze


def _value(s, name, text_ok=False):
    if s in ("True", "False"):
        return s == "True"
    if s.startswith("*"):
        return s
    try:
        return int(s, 0)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        if text_ok:
            return s
        raise TilelabError(f"{name}: '{s}' is not an integer, a float, True/False or a pointer dtype like *fp16") from None


def _pairs(items, flag, text_ok=False):
    out = {}
    for it in items or []:
        if "=" not in it:
            raise TilelabError(f"{flag} {it!r}: write NAME=VALUE")
        k, v = it.split("=", 1)
        out[k.strip()] = _value(v.strip(), f"{flag} {k.strip()}", text_ok)
    return out


def _dims(s, flag):
    try:
        v = tuple(int(x) for x in s.split(","))
    except ValueError:
        raise TilelabError(f"{flag} {s!r}: write X[,Y[,Z]] with integers") from None
    return v


def _load(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise TilelabError(f"{spec!r}: write FILE.py:KERNEL")
    if not os.path.isfile(path):
        raise TilelabError(f"{path}: no such file")
    mod_name = "tilelab_user_" + os.path.splitext(os.path.basename(path))[0]
    sp = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(sp)
    sys.modules[mod_name] = mod  # Triton reads the source through the module
    try:
        sp.loader.exec_module(mod)
    except Exception as e:
        raise TilelabError(f"{path} could not be imported: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    if not hasattr(mod, name):
        raise TilelabError(f"{path} has no {name}")
    return getattr(mod, name)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tilelab.triton", description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="FILE.py:KERNEL, a @triton.jit function")
    ap.add_argument("--grid", default="1", help="X[,Y,Z] programs (default 1)")
    ap.add_argument("--cta", default="0", help="the program to simulate, X[,Y,Z] (default 0)")
    ap.add_argument("--arg", action="append", help="NAME=VALUE of a parameter (repeatable)")
    ap.add_argument("--constexpr", action="append", help="NAME=VALUE of a tl.constexpr (repeatable)")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--out-dir", help="keep the PTX and launch file here")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    a = ap.parse_args(argv)
    try:
        fn = _load(a.kernel)
        r = analyze(fn, _dims(a.grid, "--grid"), _pairs(a.arg, "--arg"), num_warps=a.num_warps,
                    num_stages=a.num_stages, target=a.target, cta=_dims(a.cta, "--cta"), out_dir=a.out_dir,
                    **_pairs(a.constexpr, "--constexpr", text_ok=True))
    except TilelabError as e:
        print(f"tilelab.triton: error: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(r.to_dict(), indent=1))
        return 0
    t = r.totals
    print(f"{r.kernel}, CTA {r.cta}: shared loads {t.get('shared_ld_wavefronts')} wavefronts "
          f"({t.get('shared_ld_bank_conflicts')} bank conflicts), stores {t.get('shared_st_wavefronts')} "
          f"({t.get('shared_st_bank_conflicts')}); SASS " + " ".join(f"{k} {v}" for k, v in (t.get("sass") or {}).items()))
    print(f"{'source':<28} {'executions':>10} {'wavefronts':>10} {'conflicts':>9}  SASS       text")
    for g in r.by_source():
        where = f"{os.path.basename(g['file'])}:{g['line']}" if g["file"] else "(no .loc)"
        print(f"{where:<28} {g['executions']:>10} {g['wavefronts']:>10} {g['bank_conflicts']:>9}  "
              f"{','.join(g['sass']):<10} {g['text'] or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
