"""The help texts of options that several commands take alike."""

NO_WAIT_HELP = ("fail at once (exit 75) instead of waiting when another process is writing the lake "
                "(the line says which: pid, host, command, since when)")

EXPORT_HELP = ("also write each trace's Perfetto export beside its page (<page>.trace.json.gz, as `tracelake "
               "export` writes it) and link the findings and largest GPU gaps to it, with their time in it")
