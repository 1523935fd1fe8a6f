"""The report of one simulated CTA (``tilelab ptx --json``), with the source lines behind it.

Units as the binary reports them: wavefronts and bank conflicts in Nsight Compute's terms
(``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}``, ``l1tex__data_bank_conflicts_...``),
executions in warp instructions, TMA bytes in bytes.
"""
import html
import json
import linecache
import os
import tempfile
from collections import OrderedDict

class Report:
    """One CTA's counts.

    * ``totals``: the per-CTA totals (dict; ``totals["sass"]["LDS"]``, ``shared_ld_wavefronts``,
      ``gmma_wavefronts``, ``tma_ld_bytes``, ...);
    * ``lines``: one dict per PTX line with shared-memory or tensor work: ``line``, ``ptx``,
      ``sass``, ``executions``, ``wavefronts``, ``ideal``, ``bank_conflicts``, and ``source``
      (``{"file", "line", "column", "text"}`` from the binary's ``source``, ``text`` read here, or
      ``None`` without ``.loc``);
    * ``kernel``, ``cta``, ``doc`` (the whole JSON document);
    * with ``ctas=``: ``ctas_simulated``, ``spread`` (counter -> ``{min, median, max, max_cta,
      sum}``) and ``busiest_cta``; ``None`` (1 CTA simulated) otherwise.

    ``file_hints`` (basename -> path) finds a source file that moved since the PTX was made.
    """

    def __init__(self, doc, launch_file=None, file_hints=None):
        self.doc = doc
        self.launch_file = launch_file
        self.kernel = doc.get("kernel")
        self.cta = doc.get("cta")
        self.totals = doc.get("totals", {})
        # Many CTAs (``ctas=``): each counter's spread over them and the busiest; else None.
        self.spread = doc.get("spread")
        self.busiest_cta = doc.get("busiest_cta")
        self.ctas_simulated = doc.get("ctas_simulated", 1)
        self.lines = []
        for entry in doc.get("lines", []):
            e = dict(entry)
            # The binary reads .file/.loc: each line's "source" (null without a .loc).
            s = e.get("source")
            src = (s["file"], s["line"], s["column"]) if s else None
            if src and not os.path.isfile(src[0]) and os.path.basename(src[0]) in (file_hints or {}):
                # Triton's cache keeps the path of the first compile of the same source.
                src = (file_hints[os.path.basename(src[0])], src[1], src[2])
            if src:
                text = linecache.getline(src[0], src[1]).strip() if os.path.isfile(src[0]) else None
                e["source"] = {"file": src[0], "line": src[1], "column": src[2], "text": text or None}
            else:
                e.setdefault("source", None)
            self.lines.append(e)

    def by_source(self):
        """The lines summed per source line: a list of dicts ``file``, ``line``, ``text``,
        ``ptx_lines``, ``executions``, ``wavefronts``, ``bank_conflicts``, ``sass`` (the SASS
        classes), in the order the source lines first appear; PTX lines without ``.loc`` are
        under ``file`` None."""
        groups = OrderedDict()
        for e in self.lines:
            s = e.get("source") or {}
            key = (s.get("file"), s.get("line"))
            g = groups.setdefault(key, {
                "file": key[0], "line": key[1], "text": s.get("text"), "ptx_lines": [],
                "executions": 0, "wavefronts": 0, "bank_conflicts": 0, "sass": []})
            g["ptx_lines"].append(e["line"])
            for k in ("executions", "wavefronts", "bank_conflicts"):
                g[k] += int(e.get(k) or 0)
            if e.get("sass") and e["sass"] not in g["sass"]:
                g["sass"].append(e["sass"])
        return list(groups.values())

    def worst(self):
        """The PTX line with the most bank conflicts (then the most wavefronts), or None."""
        if not self.lines:
            return None
        return max(self.lines, key=lambda e: (int(e.get("bank_conflicts") or 0), int(e.get("wavefronts") or 0)))

    def to_dict(self):
        """A JSON-ready dict: kernel, cta, totals, lines (with source)."""
        return {"kernel": self.kernel, "cta": self.cta, "totals": self.totals, "lines": self.lines}

    def __repr__(self):
        t = self.totals
        return (f"<tilelab Report {self.kernel} cta {self.cta}: ld {t.get('shared_ld_wavefronts')} / "
                f"st {t.get('shared_st_wavefronts')} wavefronts, "
                f"{(t.get('shared_ld_bank_conflicts') or 0) + (t.get('shared_st_bank_conflicts') or 0)} bank conflicts>")

    def bank_grid_svg(self, line=None):
        """The SVG bank grid of ``line``'s worst execution (default: :meth:`worst`'s line), drawn
        by ``tilelab ptx --svg``; None without a launch file or line."""
        from ._binary import run

        w = self.worst()
        line = line or (w and w["line"])
        if not (self.launch_file and line):
            return None
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "grid.svg")
            run(["ptx", "--launch", self.launch_file, "--svg", p, "--line", line])
            with open(p) as f:
                return f.read()

    def _repr_html_(self):
        """The notebook view: totals, the per-source-line table, the worst request's bank grid."""
        t = self.totals
        esc = html.escape
        rows = []
        for g in self.by_source():
            where = f"{os.path.basename(g['file'])}:{g['line']}" if g["file"] else "(no .loc)"
            rows.append(
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>".format(
                    esc(where), esc(g["text"] or ""), esc(", ".join(g["sass"])), g["executions"],
                    g["wavefronts"], g["bank_conflicts"], esc(", ".join(map(str, g["ptx_lines"])))))
        sass = t.get("sass") or {}
        head = (f"<p><b>{esc(str(self.kernel))}</b>, CTA {esc(json.dumps(self.cta))}: shared loads "
                f"{t.get('shared_ld_wavefronts')} wavefronts ({t.get('shared_ld_bank_conflicts')} bank conflicts), "
                f"stores {t.get('shared_st_wavefronts')} ({t.get('shared_st_bank_conflicts')}); "
                + esc(" ".join(f"{k} {v}" for k, v in sass.items())) + "</p>")
        try:
            svg = self.bank_grid_svg()
        except Exception:  # the picture is a bonus: the table stands without it
            svg = None
        w = self.worst()
        pic = (f"<p>Worst request: PTX line {w['line']} (<code>{esc(w['ptx'])}</code>)</p>{svg}"
               if svg and w else "")
        return (head + "<table><thead><tr><th>source</th><th>text</th><th>SASS</th><th>executions</th>"
                "<th>wavefronts</th><th>bank conflicts</th><th>PTX lines</th></tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>" + pic)

