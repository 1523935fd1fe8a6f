#!/usr/bin/env python3
"""Select records from a replay file by name prefix (e.g. one measured set out of everything
`tilelab verify --save-measured` wrote).

    python3 scripts/select_records.py MEASURED.json PREFIX [--strip] > OUT.json

PREFIX: records whose name starts with it (`h200.`, `lesson.`, `fuzz.5.`, `fuzz1400.`,
`targeted.`, `pairs.`). --strip removes PREFIX from the names (verify names the built-in
`tests/data/h200_wavefronts.json` records `h200.<name>`). Input: a replay file, either the
object `{"provenance": {...}, "records": [...]}` that `--save-measured` writes or a bare JSON
array of records. Output: the same form, the records selected in input order, fields as in the
input; an object's provenance is kept, with `records` the number selected and this command
appended to its `command`, so that the output carries its provenance inside as every measured
file of `tests/data/` does (tests/data/README.md).
"""
import json
import sys


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    strip = "--strip" in argv[1:]
    unknown = [a for a in argv[1:] if a.startswith("--") and a != "--strip"]
    if len(args) != 2 or unknown:
        sys.exit(__doc__.strip().splitlines()[3].strip())
    path, prefix = args
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict):
        if not isinstance(data.get("records"), list):
            sys.exit(f"select_records.py: {path} is an object without a \"records\" array")
        records = data["records"]
    else:
        records = data
    out = []
    for r in records:
        if r["name"].startswith(prefix):
            if strip:
                r = dict(r, name=r["name"][len(prefix):])
            out.append(r)
    if not out:
        sys.exit(f"select_records.py: no record of {path} starts with '{prefix}'")
    if isinstance(data, dict) and isinstance(data.get("provenance"), dict):
        prov = dict(data["provenance"])
        prov["records"] = len(out)
        here = " ".join(["python3 scripts/select_records.py"] + argv[1:])
        prov["command"] = f"{prov.get('command', '')} && {here}"
        json.dump({"provenance": prov, "records": out}, sys.stdout, ensure_ascii=False)
    else:
        json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
