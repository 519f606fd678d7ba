"""`tracelake report --eml` on a lake of one trace needs no --trace; on a lake of several it says
how many traces there are and asks for one."""

from __future__ import annotations

import email
from email import policy

from conftest import DATA
from tracelake.analysis.cli import main


def test_eml_of_a_one_trace_lake_needs_no_trace(tmp_path, capsys):
    lake = tmp_path / "lake"
    assert main(["ingest", str(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"), "--lake", str(lake),
                 "-q"]) == 0
    html, eml = tmp_path / "r.html", tmp_path / "r.eml"
    assert main(["report", "--lake", str(lake), "-o", str(html), "--eml", str(eml)]) == 0
    msg = email.message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert "torch-2.11_mnist-cnn-train_h100" in msg["Subject"] and html.read_text().startswith("<!DOCTYPE html>")


def test_eml_of_a_lake_of_several_traces_asks_for_one(sample_lake, tmp_path, capsys):
    assert main(["report", "--lake", str(sample_lake), "-o", str(tmp_path / "r.html"),
                 "--eml", str(tmp_path / "r.eml")]) == 2
    assert "--eml needs exactly one --trace: the lake holds 4 traces" in capsys.readouterr().err
    assert not (tmp_path / "r.eml").exists()
