"""The `diff` tool: `tracelake diff --format json` of two traces or runs of the lake (jobs/diff.py):
the steady step time of each side, the verdict of the noise test and the causes of the change,
largest first, as many as fit the answer. Each side is named as `tracelake diff --lake` names it,
a trace id, a unique prefix of one, or a run id; never a file."""

from __future__ import annotations

import json

from ..jobs.diff import DiffInputError, compare
from .answer import Answer
from .lake_session import LakeSession
from .refusal import Refusal

DESCRIPTION = (
    "Compare two traces or runs of the lake, as `tracelake diff --format json`: the median step time of "
    "each side's steady steps (step_time_ns), the verdict of the noise test (slower, faster, within noise, "
    "too few steps), and the causes of the change, largest first, in ns per steady step (kernels, "
    "operators, precision, host syncs, GPU idle, copies, communication) with what is left unexplained. "
    "`base` and `new`: a trace id, a unique prefix of one, or a run id (list_traces). `causes_offset` "
    "skips that many causes (the next page).")


def diff(session: LakeSession, base: str, new: str, causes_offset: int = 0) -> str:
    with session.cursor() as cur:
        sides = [_side(cur, arg) for arg in (base, new)]
        try:
            result = compare(cur, *sides, base, new)
        except DiffInputError as e:
            raise Refusal(str(e)) from None
    causes, offset = result.pop("causes"), max(0, causes_offset)
    shown = _fitting(result, causes[offset: offset + session.limits.max_rows], session.limits.max_chars - 600)
    answer = Answer(session.limits)
    answer.line(json.dumps({**result, "causes": shown}))
    end = offset + len(shown)
    if not shown and end < len(causes):
        answer.line(f"cause {end + 1} of {len(causes)} alone is longer than this server's answers may be "
                    f"({session.limits.max_chars:,} characters: its --max-chars)")
    elif offset or end < len(causes):
        answer.line(f"causes {offset + 1} to {end} of {len(causes)} are shown"
                    + (f"; the rest: diff({json.dumps(base)}, {json.dumps(new)}, causes_offset={end})"
                       if end < len(causes) else ""))
    answer.then(f'headline("{sides[1][0]}") for the new side\'s step time, what bounds it and its findings')
    return answer.text()


def _fitting(result: dict, causes: list[dict], max_chars: int) -> list[dict]:
    """The leading causes whose JSON, with the rest of the result, stays under max_chars."""
    room = max_chars - len(json.dumps(result))
    for n, c in enumerate(causes):
        room -= len(json.dumps(c)) + 2
        if room < 0:
            return causes[:n]
    return causes


def _side(cur, arg: str) -> list[str]:
    """The trace ids a side names: a trace id, the only one starting with `arg`, or a run of
    several traces (rank_runs), in this order, as `tracelake diff --lake` reads them."""
    ids = [r[0] for r in cur.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall()]
    if arg in ids:
        return [arg]
    matches = [t for t in ids if t.startswith(arg)]
    if len(matches) == 1:
        return matches
    runs = dict(cur.execute("""SELECT run_id, list_sort(list(DISTINCT trace_id)) FROM rank_runs GROUP BY run_id
                               HAVING count(DISTINCT trace_id) > 1""").fetchall())
    if arg in runs:
        return runs[arg]
    raise Refusal(f"{arg!r} names {len(matches)} traces of the lake and no run of several (a trace id, a unique "
                  "prefix of one, or a run id); list_traces() lists them")
