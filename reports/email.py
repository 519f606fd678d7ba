"""A report as an e-mail: multipart/alternative with a plain-text part and the HTML page whose
charts are attached as PNG parts referenced by Content-ID (mail clients block data: URIs and SVG).
The message carries a Date (when it was written) and a Message-ID, as RFC 5322 asks of a message's
originator: mail clients sort and thread by them, and some relays refuse mail without a Date.
Sending goes through SMTP (optionally STARTTLS and login; the password comes from the
TRACELAKE_SMTP_PASSWORD environment variable, never the command line)."""

from __future__ import annotations

import base64
import html as html_lib
import re
import smtplib
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate, make_msgid

_DATA_IMAGE = re.compile(r'src="data:image/(png|svg\+xml);base64,([A-Za-z0-9+/=]+)"')
_SVG_WIDTH = re.compile(r'<svg[^>]*?\swidth="([0-9.]+)"')
_TAGS = re.compile(r"<[^>]+>")


def _plain_text(page: str) -> str:
    """A readable text version of the report: headings, cards and table rows, tags removed."""
    body = page.split("<main>", 1)[-1]
    body = re.sub(r"<style.*?</style>", "", body, flags=re.S)
    body = re.sub(r"<img[^>]*>", "[chart]", body)
    body = re.sub(r"</(h1|h2|p|tr|div)>", "\n", body)
    body = re.sub(r"</t[dh]>", "  ", body)
    text = html_lib.unescape(_TAGS.sub("", body))
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line) + "\n"


def build_message(page: str, subject: str, sender: str | None = None, to: str | None = None) -> EmailMessage:
    msg = EmailMessage(policy=SMTP)
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain="tracelake")  # no host name: .eml files are shared
    if sender:
        msg["From"] = sender
    if to:
        msg["To"] = to
    images: list[tuple[str, bytes]] = []

    def to_cid(match: re.Match) -> str:
        cid = make_msgid(domain="tracelake")
        image, size = base64.b64decode(match.group(2)), ""
        # the page's SVG charts, rasterized at 1.5x their size: sharp on most screens, and a page of a
        # dozen charts stays a mail of ~2-3 MB (at 2x the ResNet sample's mail was 3.8 MB)
        if match.group(1) != "png":
            import vl_convert

            width = _SVG_WIDTH.search(image[:500].decode(errors="replace"))
            size = f'width="{round(float(width.group(1)))}" ' if width else ""
            image = vl_convert.svg_to_png(image.decode(), scale=1.5)
        images.append((cid, image))
        return f'{size}src="cid:{cid[1:-1]}"'

    html_part = _DATA_IMAGE.sub(to_cid, page)
    msg.set_content(_plain_text(page), cte="quoted-printable")  # SMTP limits lines to 998 bytes
    msg.add_alternative(html_part, subtype="html", cte="quoted-printable")
    related = msg.get_payload()[1]
    for cid, png in images:
        related.add_related(png, maintype="image", subtype="png", cid=cid)
    return msg


def send(eml: bytes, host: str, port: int, sender: str, to: list[str], starttls: bool = False,
         user: str | None = None, password: str | None = None) -> None:
    with smtplib.SMTP(host, port, timeout=60) as smtp:
        if starttls:
            smtp.starttls()
        if user:
            smtp.login(user, password or "")
        smtp.sendmail(sender, to, eml)
