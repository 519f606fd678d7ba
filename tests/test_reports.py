"""HTML reports: self-contained (no JavaScript, no network), sections present, trace strings escaped."""

from __future__ import annotations

import json
import re

from tracelake.analysis.cli import main
from tracelake.analysis.lake import connect
from tracelake.reports.write import write_reports


def test_reports_for_the_sample_lake(sample_con, tmp_path):
    index = write_reports(sample_con, tmp_path / "reports")
    pages = sorted((tmp_path / "reports" / "traces").glob("*.html"))
    assert len(pages) == 4
    for page in [index, *pages]:
        html = page.read_text()
        assert "<script" not in html.lower()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no network resources"
        assert page.stat().st_size < 2_000_000
    resnet = next(p for p in pages if "resnet50" in p.name).read_text()
    for section in ("Findings", "GPU utilization over time", "Where the GPU time goes", "Top kernels",
                    "Which code launched the GPU time", "Kernels", "Memory copies", "Why the GPU waits", "Steps"):
        assert f"<h2>{section}</h2>" in resnet, section
    assert resnet.count('src="data:image/png;base64,') == 4
    assert "pageable_copy_in_step" in resnet  # the finding the trace was recorded to show
    assert 'href="traces/' in index.read_text()


def test_untrusted_names_are_escaped(tmp_path):
    evil = ['<script>alert("x")</script>', "<img src=x onerror=alert(1)>", "it's \"quoted\" & <b>bold</b>",
            "void very::long::templated::kernel<" + "T, " * 200 + "U>(int)"]
    events = []
    for i, name in enumerate(evil):
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 100.0 + 10 * i, "dur": 5.0,
                       "args": {"device": 0, "stream": 7, "correlation": i + 1}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": 99.0 + 10 * i, "dur": 1.0, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "user_annotation", "name": evil[i], "pid": 1, "tid": 1,
                       "ts": 98.0 + 10 * i, "dur": 3.0, "args": {}})
    trace = tmp_path / "evil.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    lake = tmp_path / "lake"
    assert main(["ingest", str(trace), "--lake", str(lake), "-q"]) == 0
    con = connect(lake)
    index = write_reports(con, tmp_path / "reports")
    con.close()
    html = next((tmp_path / "reports" / "traces").glob("*.html")).read_text() + index.read_text()
    assert "<script" not in html and "<img src=x" not in html and "<b>bold" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "…" in html  # the long template name is shortened in the table ...
    assert "U&gt;(int)" in html  # ... and complete in its title attribute


def test_report_as_email_sent_through_a_real_smtp_server(sample_lake, tmp_path, capsys):
    import email
    from email import policy

    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    received = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    html, eml = tmp_path / "r.html", tmp_path / "r.eml"
    assert main(["report", "--lake", str(sample_lake), "--trace", "torch-2.11_resnet50", "-o", str(html),
                 "--eml", str(eml)]) == 0
    import socket

    with socket.socket() as probe:  # a free loopback port for the test's own SMTP server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        assert main(["mail", str(eml), "--smtp", f"127.0.0.1:{port}", "--from", "perf@example.com",
                     "--to", "team@example.com"]) == 0
    finally:
        controller.stop()
    assert len(received) == 1
    msg = email.message_from_bytes(received[0].as_bytes(), policy=policy.default)
    assert msg["To"] == "team@example.com" and msg.get_content_type() == "multipart/alternative"
    text = msg.get_body(("plain",)).get_content()
    assert "Findings" in text and "pageable_copy_in_step" in text
    body = msg.get_body(("html",))
    page = body.get_content()
    cids = re.findall(r'src="cid:([^"]+)"', page)
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert len(cids) == len(images) == 4 and "data:image" not in page
    assert {p["Content-ID"].strip("<>") for p in images} == set(cids)
    assert eml.stat().st_size < 2_500_000


def test_report_command_writes_an_index_linking_its_pages(sample_lake, tmp_path):
    out = tmp_path / "all.html"
    assert main(["report", "--lake", str(sample_lake), "-o", str(out)]) == 0
    links = re.findall(r'href="([^"]+)"', out.read_text())
    assert len(links) == 4 and all(link.startswith("all_files/traces/") for link in links)
    assert all((tmp_path / link).exists() for link in links)
