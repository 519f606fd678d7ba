"""`tracelake mail OUT.eml --smtp HOST:PORT`: a report's e-mail sent by SMTP."""

from __future__ import annotations

import sys
from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from ..terminal import say

NAME = "mail"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="send a report .eml file by SMTP",
                       description="Send an .eml written by `tracelake report --eml`. The SMTP password, if any, "
                                   "is read from the TRACELAKE_SMTP_PASSWORD environment variable.",
                       epilog="Example: tracelake mail rank0.eml --smtp mail.example.com:587 --starttls "
                              "--user me --from me@example.com --to team@example.com")
    s.add_argument("eml", metavar="OUT.eml")
    s.add_argument("--smtp", required=True, metavar="HOST:PORT")
    s.add_argument("--from", dest="sender", required=True, metavar="ADDRESS")
    s.add_argument("--to", required=True, action="append", metavar="ADDRESS", help="repeatable")
    s.add_argument("--starttls", action="store_true")
    s.add_argument("--user", metavar="NAME")


def run(args) -> int:
    import email
    import email.policy
    import email.utils
    import os
    import smtplib

    from ...ingest.printable import has_control
    from ...jobs import fs_errors
    from ...reports.email import send

    for option, address in [("--from", args.sender)] + [("--to", a) for a in args.to]:
        if has_control(address):
            say(f"error  {option} {address}: an address cannot hold line breaks or other control characters",
                err=True)
            return EXIT_USAGE
    host, _, port = args.smtp.rpartition(":")
    if not host or not port.isdigit():
        print(f"error  --smtp {args.smtp!r}: expected HOST:PORT", file=sys.stderr)
        return EXIT_USAGE
    try:
        msg = email.message_from_bytes(Path(args.eml).read_bytes(), policy=email.policy.SMTP)
    except OSError as e:
        say(f"error  {fs_errors.describe(e)}", err=True)
        return EXIT_USAGE
    del msg["From"], msg["To"], msg["Date"], msg["Message-ID"]
    # each sending is a new message, as a mail client's draft: its own date and id (a relay may
    # refuse a message without a Date; clients drop a second message with the same Message-ID)
    msg["From"], msg["To"] = args.sender, ", ".join(args.to)
    msg["Date"], msg["Message-ID"] = email.utils.formatdate(localtime=True), email.utils.make_msgid(domain="tracelake")
    try:
        send(msg.as_bytes(), host, int(port), args.sender, args.to, args.starttls, args.user,
             os.environ.get("TRACELAKE_SMTP_PASSWORD"))
    except (OSError, smtplib.SMTPException) as e:
        say(f"error  sending {args.eml} via {args.smtp}: {e}", err=True)
        return EXIT_SOME_FAILED
    say(f"sent {args.eml} to {', '.join(args.to)}")
    return EXIT_OK
