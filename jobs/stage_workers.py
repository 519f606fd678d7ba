"""How many worker processes a stage of the batch job is worth. A worker costs its start before it
does any work: a process from the fork server that imports the stage's libraries, and the work
each task repeats whatever its size (a derivation batch plans every view, a report task evaluates
the shared views). Spread over `jobs` workers, a stage of `work_s` seconds (on one core) takes
about work_s / jobs + start_s; in the calling process, work_s. So a small stage (`make demo`'s 4
samples: about a second each) runs in one, and a big one on every worker as before."""

from __future__ import annotations


def worth(jobs: int, work_s: float, start_s: float) -> int:
    """`jobs` when spreading the work over them beats one process; 0 (the calling process) when
    even one worker costs more to start than the work; else 1."""
    if jobs > 1 and work_s / jobs + start_s < work_s:
        return jobs
    return 0 if work_s < start_s else 1
