"""`tracelake report --eml` on a lake of one trace needs no --trace and prints where it wrote the
page and the message, which carries a Date and a Message-ID; on a lake of several it says how many
traces there are and asks for one."""

from __future__ import annotations

import email
import time
from email import policy
from email.utils import parseaddr, parsedate_to_datetime

from conftest import DATA
from tracelake.cli.main import main


def test_eml_of_a_one_trace_lake_needs_no_trace(tmp_path, capsys):
    lake = tmp_path / "lake"
    assert main(["ingest", str(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"), "--lake", str(lake),
                 "-q"]) == 0
    html, eml = tmp_path / "r.html", tmp_path / "r.eml"
    before = time.time()
    assert main(["report", "--lake", str(lake), "-o", str(html), "--eml", str(eml)]) == 0
    assert capsys.readouterr().out.splitlines() == [str(html.resolve()), str(eml.resolve())]
    msg = email.message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert "torch-2.11_mnist-cnn-train_h100" in msg["Subject"] and html.read_text().startswith("<!DOCTYPE html>")
    # RFC 5322: a date with its zone, of when the message was written; a Message-ID <left@right>
    written = parsedate_to_datetime(msg["Date"])
    assert written.tzinfo is not None and before - 1 <= written.timestamp() <= time.time() + 1
    msg_id = msg["Message-ID"]
    assert msg_id.startswith("<") and msg_id.endswith(">") and parseaddr(msg_id[1:-1])[1].count("@") == 1


def test_eml_of_a_lake_of_several_traces_asks_for_one(sample_lake, tmp_path, capsys):
    assert main(["report", "--lake", str(sample_lake), "-o", str(tmp_path / "r.html"),
                 "--eml", str(tmp_path / "r.eml")]) == 2
    assert "--eml needs exactly one --trace: the lake holds 4 traces" in capsys.readouterr().err
    assert not (tmp_path / "r.eml").exists()
