"""What every section of a diff page shares (`tracelake diff --format html`, and the index's
run-to-run diffs): the diff object of jobs/diff.py (with its sides' steady_summary rows, 'summary')
and what several sections read of it: the verdict and each cause's evidence in a few words. The
sections are reports/diff_sections (the trace page's unit: NAME, TITLE, VIEWS, build(page));
numbers are formatted by the templates with the theme's formats; every string is autoescaped."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DiffPage:
    result: dict  # jobs/diff.py's object

    @property
    def verdict(self) -> str:
        """analysis/diff_noise.verdict's: slower, faster, within noise, or inconclusive."""
        return self.result["noise"]["verdict"]

    @property
    def summary(self) -> dict:
        """The sides' steady_summary rows ({'base': [...], 'new': [...]}), when asked for."""
        return self.result.get("summary") or {}

    def causes(self, kinds: tuple[str, ...] | None = None) -> list[dict]:
        """The causes (of these kinds), largest first, each with its order on the page (`order`: its
        place among all causes) and its evidence in a few words (`evidence_text`)."""
        return [dict(c, order=i, evidence_text=evidence_text(c["evidence"]))
                for i, c in enumerate(self.result["causes"], 1) if kinds is None or c["kind"] in kinds]


def evidence_text(ev: dict) -> str:
    """The evidence in a few words, beyond the per-step times the table shows."""
    parts = []
    for key, value in ev.items():
        if key in ("base_ns_per_step", "new_ns_per_step"):
            continue
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float | None) for v in value):
            parts.append(f"{key.replace('_per_step', '/step')} {_num(value[0])}->{_num(value[1])}")
        elif isinstance(value, dict):
            parts.append(", ".join(f"{k} {_num(v[0])}->{_num(v[1])}/step" for k, v in value.items()))
        elif isinstance(value, list):
            parts.append("; ".join(map(str, value)))
        else:
            parts.append(str(value))
    return "; ".join(parts)


def _num(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}"
