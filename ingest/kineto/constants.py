"""What the source unit (__init__.py) and its reader both need; it imports nothing, so that the
reader's modules need not import the unit, which imports them."""

NAME = "pytorch"  # traces.source
UTF8_BOM = b"\xef\xbb\xbf"
