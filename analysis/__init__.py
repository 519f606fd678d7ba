"""tracelake.analysis: the analyses written in Python rather than SQL: the critical path and its
what-if scenarios (critpath_*), calling-context trees (callctx_*), memory context, and the diff's
causes, noise test and CI gate (diff_*). They read the lake and write derived tables into it."""
