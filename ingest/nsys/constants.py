"""What the source unit (__init__.py) and its reader both need; it imports nothing, so that the
reader's modules need not import the unit, which imports them."""

NAME = "nsys"  # traces.source
SQLITE_MAGIC = b"SQLite format 3\x00"
REPORT_SUFFIXES = (".nsys-rep", ".qdrep")
