"""`tracelake mcp`: the lake's MCP server, driven as an agent drives it: `tracelake mcp --lake ...`
spawned as a subprocess and spoken to by the MCP SDK's stdio client. Its answers are checked
against the views they come from on the sample lake (tests/data); hostile queries get one line or
stop at a limit, and the server answers after them; every answer stays within its bounds and says
what to call next (docs/mcp.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client

TRACELAKE = str(Path(sys.executable).with_name("tracelake"))
STRICT = {"max_rows": 5, "max_chars": 2_000, "time_limit_s": 2}


class Agent:
    """A client of one server process, called synchronously (the session lives in a portal's thread)."""

    def __init__(self, portal, session: ClientSession, stderr: Path):
        self.portal, self.session, self.stderr = portal, session, stderr

    def call(self, tool: str, **arguments) -> tuple[bool, str]:
        """(is_error, text) of a tool call."""
        result = self.portal.call(lambda: self.session.call_tool(tool, arguments))
        (content,) = result.content
        return result.is_error, content.text

    def answer(self, tool: str, **arguments) -> str:
        is_error, text = self.call(tool, **arguments)
        assert not is_error, text
        return text

    def refusal(self, tool: str, **arguments) -> str:
        is_error, text = self.call(tool, **arguments)
        assert is_error, text
        return text

    def run(self, coroutine_function):
        return self.portal.call(lambda: coroutine_function(self.session))


@asynccontextmanager
async def _connected(args: list[str], stderr):
    async with stdio_client(StdioServerParameters(command=TRACELAKE, args=args), errlog=stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def _agent(lake: Path, stderr_path: Path, *options: str):
    with stderr_path.open("w") as stderr, start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(_connected(["mcp", "--lake", str(lake), *options], stderr)) as session:
            yield Agent(portal, session, stderr_path)
    assert "Traceback" not in stderr_path.read_text()  # no tool crashed


@pytest.fixture(scope="module")
def agent(sample_lake, tmp_path_factory):
    """A server with the default limits."""
    yield from _agent(sample_lake, tmp_path_factory.mktemp("mcp") / "stderr.txt")


@pytest.fixture(scope="module")
def strict(sample_lake, tmp_path_factory):
    """A server with small limits: 5 rows, 2,000 characters, 2 s, 1 GB."""
    yield from _agent(sample_lake, tmp_path_factory.mktemp("mcp-strict") / "stderr.txt",
                      "--max-rows", str(STRICT["max_rows"]), "--max-chars", str(STRICT["max_chars"]),
                      "--time-limit", str(STRICT["time_limit_s"]), "--memory-limit", "1GB")


def tables(text: str) -> list[list[dict[str, str]]]:
    """The Markdown tables of an answer, each as its rows."""
    out, header = [], None
    for line in text.splitlines():
        if line.startswith("|---"):  # the header's rule
            continue
        if not line.startswith("| "):
            header = None
            continue
        cells = [c.strip() for c in line[2:-2].split(" | ")]
        if header is None:
            header = cells
            out.append([])
        else:
            out[-1].append(dict(zip(header, cells)))
    return out


def value(text: str, name: str) -> float:
    """The number an answer gives as `name = number`."""
    return float(re.search(rf"\b{name} = (-?[0-9.]+)", text).group(1))


def test_tools_are_listed_read_only_with_their_parameters(agent):
    listed = agent.run(lambda s: s.list_tools()).tools
    assert {t.name: sorted(t.input_schema["properties"]) for t in listed} == {
        "list_traces": ["contains", "offset"], "headline": ["trace"], "list_views": ["contains", "offset"],
        "describe_view": ["name"], "query": ["offset", "sql"], "diff": ["base", "causes_offset", "new"],
        "perfetto_places": ["trace"]}
    for t in listed:
        assert t.annotations.read_only_hint and not t.annotations.destructive_hint and not t.annotations.open_world_hint


def test_list_traces_gives_each_trace_with_its_steps_and_step_time(agent, sample_con):
    text = agent.answer("list_traces")
    (rows,) = tables(text)
    expected = sample_con.execute("""
        SELECT s.trace_id, s.source, s.gpu_names[1], sum(st.steps), s.median_step_ns
        FROM trace_summary s JOIN steady_summary st USING (trace_id) GROUP BY ALL ORDER BY s.trace_id""").fetchall()
    got = sorted((r["trace_id"], r["source"], json.loads(r["gpu_names"])[0], int(r["steady_steps"]),
                  float(r["median_step_ns"])) for r in rows)
    assert got == [(t, src, gpu, int(steps), median) for t, src, gpu, steps, median in expected]
    assert all(r["run_id"] == r["trace_id"] for r in rows)  # no distributed run among the samples
    assert f'next: headline("{rows[0]["trace_id"]}")' in text


@pytest.mark.parametrize("prefix", ["torch-2.11_resnet50", "nsys-2025.3.1_cnn"])
def test_headline_is_steady_summary_and_the_costliest_findings(agent, sample_con, prefix):
    text = agent.answer("headline", trace=prefix)
    trace_id = sample_con.execute("SELECT trace_id FROM traces WHERE starts_with(trace_id, ?)", [prefix]).fetchone()[0]
    cur = sample_con.execute("SELECT * FROM steady_summary WHERE trace_id = ? ORDER BY pid LIMIT 1", [trace_id])
    steady = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    assert text.startswith(f"trace {trace_id}:")
    assert value(text, "median_step_ns") == pytest.approx(steady["median_step_ns"], abs=1e-3)
    assert value(text, "p90_step_ns") == pytest.approx(steady["p90_step_ns"], abs=1e-3)
    assert value(text, "gpu_idle_pct") == pytest.approx(steady["gpu_idle_pct"], abs=1e-3)
    assert f"bound_by = {steady['bound_by']} " in text
    assert f"main_idle_cause = {steady['main_idle_cause']} " in text
    idle, findings = tables(text)
    by_host = sample_con.execute("""SELECT kind, name, idle_ns FROM steady_idle WHERE trace_id = ? AND pid = ?
                                    ORDER BY idle_ns DESC, kind, name LIMIT 5""", [trace_id, steady["pid"]]).fetchall()
    assert [(r["kind"], r["name"], int(r["idle_ns"])) for r in idle] == by_host
    top = sample_con.execute("""SELECT rule, cost_ns FROM findings_by_rule WHERE trace_id = ?
                                ORDER BY cost_ns DESC NULLS LAST, rule LIMIT 3""", [trace_id]).fetchall()
    assert [(r["rule"], int(r["cost_ns"])) for r in findings] == top
    assert all(r["advice"] for r in findings)
    assert f'next: perfetto_places("{trace_id}")' in text


def test_describe_view_gives_the_header_every_column_and_a_query_that_runs(agent, sample_con):
    text = agent.answer("describe_view", name="steady_summary")
    assert text.startswith("view steady_summary, defined in sql/analysis/steady_summary.sql")
    assert "reads: steady_state, steps" in text
    (columns,) = tables(text)
    described = sample_con.execute("DESCRIBE steady_summary").fetchall()
    assert [(c["column"], c["type"]) for c in columns] == [(name, kind) for name, kind, *_ in described]
    meaning = {c["column"]: c["meaning"] for c in columns}
    assert meaning["median_step_ns"] == "Median wall time of the steady steps (ns): the step time (steps.wall_ns)."
    assert all(meaning.values())
    example = text.split("\nexample: ", 1)[1].split("\n", 1)[0]
    (rows,) = tables(agent.answer("query", sql=example))
    first = sample_con.execute("SELECT min(trace_id) FROM traces").fetchone()[0]
    assert rows and all(r["trace_id"] == first for r in rows)
    table = agent.answer("describe_view", name="kernels")
    assert table.startswith("table kernels, defined in lake/schema.py")
    assert "| duration_ns | BIGINT | end_ns - start_ns. |" in table
    assert "steady_summary" in agent.answer("list_views", contains="steady")
    assert "no table or view 'steady_sumary'" in agent.refusal("describe_view", name="steady_sumary")


def test_query_answers_as_the_view_does(agent, sample_con, sample_lake):
    sql = "SELECT trace_id, median_step_ns, bound_by FROM steady_summary ORDER BY trace_id, pid"
    text = agent.answer("query", sql=sql)
    (rows,) = tables(text)
    assert [(r["trace_id"], float(r["median_step_ns"]), r["bound_by"]) for r in rows] == sample_con.execute(sql).fetchall()
    assert f"{len(rows)} rows in all" in text and 'next: describe_view("steady_summary")' in text
    in_lake = agent.answer("query", sql=f"SELECT count(*) AS n FROM read_parquet('{sample_lake.resolve()}/kernels/**/*.parquet')")
    assert int(tables(in_lake)[0][0]["n"]) == sample_con.execute("SELECT count(*) FROM kernels").fetchone()[0]


def test_diff_is_the_json_of_tracelake_diff(agent, sample_lake, capsys):
    from tracelake.cli.main import main

    base, new = "torch-2.11_mnist", "torch-2.11_resnet50"
    text = agent.answer("diff", base=base, new=new)
    answered = json.loads(text.split("\n", 1)[0])
    assert main(["diff", base, new, "--lake", str(sample_lake), "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    causes = cli.pop("causes")
    shown = answered.pop("causes")
    assert answered == cli and shown == causes[: len(shown)] and shown
    assert answered["step_time_ns"]["new"] > answered["step_time_ns"]["base"]
    assert "next: headline(" in text
    assert "names 0 traces" in agent.refusal("diff", base="no-such-trace", new=new)


def test_perfetto_places_are_the_times_of_findings_and_gaps_from_the_trace_start(agent, sample_con, sample_lake):
    trace_id, origin = sample_con.execute("SELECT trace_id, start_ns FROM traces WHERE starts_with(trace_id, "
                                          "'torch-2.11_resnet50')").fetchone()
    text = agent.answer("perfetto_places", trace=trace_id)
    assert f"tracelake export --lake {sample_lake.resolve()} {trace_id} -o " in text
    steady, findings, gaps = tables(text)
    top = sample_con.execute("""SELECT rule, example_start_ns FROM findings_by_rule WHERE trace_id = ?
                                ORDER BY cost_ns DESC NULLS LAST, rule LIMIT 10""", [trace_id]).fetchall()
    assert [(r["rule"], r["at_s"]) for r in findings] == [
        (rule, "NULL" if t is None else f"{(t - origin) / 1e9:.6f}") for rule, t in top]
    longest = sample_con.execute("""SELECT device_id, start_ns, cause FROM largest_gpu_gaps WHERE trace_id = ?
                                    ORDER BY duration_ns DESC, size_rank LIMIT 10""", [trace_id]).fetchall()
    assert [(r["thread"], r["at_s"], r["cause"]) for r in gaps] == [
        (f"GPU {d} idle", f"{(t - origin) / 1e9:.6f}", c) for d, t, c in longest]
    start, end = sample_con.execute("SELECT start_ns, end_ns FROM steady_summary WHERE trace_id = ?", [trace_id]).fetchone()
    assert (steady[0]["from_s"], steady[0]["to_s"]) == (f"{(start - origin) / 1e9:.6f}", f"{(end - origin) / 1e9:.6f}")


def test_resources_are_the_view_reference_and_the_docs(agent, sample_lake):
    listed = {str(r.uri) for r in agent.run(lambda s: s.list_resources()).resources}
    docs = Path(__file__).resolve().parents[1] / "docs"
    assert listed == {"tracelake://views"} | {f"tracelake://docs/{p.name}" for p in docs.glob("*.md")}

    def read(uri):
        return agent.run(lambda s: s.read_resource(uri)).contents[0].text

    assert read("tracelake://docs/mcp.md") == (docs / "mcp.md").read_text(encoding="utf-8")
    reference = read("tracelake://views")
    assert "| steady_summary | view |" in reference and "| kernels | table |" in reference
    assert read("tracelake://views/idle_cause_summary").startswith("view idle_cause_summary, defined in ")


HOSTILE = {
    "copy": "COPY (SELECT 1 AS a) TO '{out}/copied.csv'",
    "explain analyze copy into the lake": "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{lake}/copied.csv'",
    "attach": "ATTACH '{out}/other.duckdb' AS other",
    "install": "INSTALL httpfs",
    "load": "LOAD httpfs",
    "set": "SET enable_external_access = true",
    "two statements": "SELECT 1; COPY (SELECT 1) TO '{out}/copied.csv'",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_statement_that_is_no_query_is_refused_in_one_line(strict, sample_lake, tmp_path, name):
    lake = sample_lake.resolve()
    text = strict.refusal("query", sql=HOSTILE[name].format(out=tmp_path, lake=lake))
    assert "\n" not in text.strip() and "refused" in text and "may run" in text
    assert not list(tmp_path.iterdir()) and not (Path(lake) / "copied.csv").exists()


@pytest.mark.parametrize("sql, says", [
    ("SELECT * FROM read_csv('/etc/passwd')", "Permission Error"),
    ("SELECT * FROM read_text('{lake}/../../../etc/hostname')", "Permission Error"),
    ("SELECT * FROM sqlite_scan('/etc/x.db', 't')", "sqlite_scan"),  # no extension is installed or loaded on demand
])
def test_a_file_outside_the_lake_cannot_be_read(strict, sample_lake, sql, says):
    text = strict.refusal("query", sql=sql.format(lake=sample_lake.resolve()))
    assert says in text and "\n" not in text.strip() and "root:" not in text


@pytest.mark.parametrize("sql", [
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",  # endless
    "SELECT a.range * b.range AS x FROM range(100000) a, range(10000) b ORDER BY x DESC",  # 10^9 rows sorted
])
def test_an_endless_or_huge_query_stops_at_a_limit_and_the_server_answers_after(strict, sql):
    t0 = time.perf_counter()
    text = strict.refusal("query", sql=sql)
    assert time.perf_counter() - t0 < STRICT["time_limit_s"] + 5
    assert text.split(": ", 1)[1].startswith("stopped at the ") and "\n" not in text.strip()
    assert tables(strict.answer("query", sql="SELECT count(*) AS n FROM traces"))[0][0]["n"] == "4"


def test_an_endless_result_is_cut_at_the_row_limit(strict):
    t0 = time.perf_counter()
    text = strict.answer("query", sql="WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT n FROM t")
    assert time.perf_counter() - t0 < STRICT["time_limit_s"] + 5  # the rest of the result is not computed
    (rows,) = tables(text)
    assert [r["n"] for r in rows] == ["1", "2", "3", "4", "5"]
    assert "cut: 5 rows shown, more follow; the rest: query(" in text


def test_every_answer_is_bounded_says_where_it_was_cut_and_what_to_call_next(strict, sample_con):
    answers = {
        "list_traces": strict.answer("list_traces"),
        "list_views": strict.answer("list_views"),
        "describe_view": strict.answer("describe_view", name="steady_summary"),
        "query": strict.answer("query", sql="SELECT name FROM kernel_summary ORDER BY total_ns DESC, name"),
        "headline": strict.answer("headline", trace="nsys"),
        "diff": strict.answer("diff", base="torch-2.11_mnist", new="torch-2.11_resnet50"),
        "perfetto_places": strict.answer("perfetto_places", trace="nsys"),
    }
    for tool, text in answers.items():
        assert len(text) <= STRICT["max_chars"] and "\nnext: " in text, tool
        assert all(len(rows) <= STRICT["max_rows"] for rows in tables(text)), tool
    assert "cut: the answer has " in answers["describe_view"]  # 29 columns do not fit 2,000 characters
    assert "cut: 5 rows shown, more follow; the rest: list_views(contains='', offset=5)" in answers["list_views"]
    # the rest of a cut query is the call it names
    rest = answers["query"].split("the rest: ", 1)[1].split("\n", 1)[0]
    assert rest.startswith("query(") and rest.endswith(", offset=5)")
    second = strict.answer("query", sql=json.loads(rest[len("query("):rest.rindex(", offset=")]), offset=5)
    names = [r[0] for r in sample_con.execute("SELECT name FROM kernel_summary ORDER BY total_ns DESC, name "
                                              "LIMIT 5 OFFSET 5").fetchall()]
    assert [r["name"] for r in tables(second)[0]] == [n if len(n) <= 200 else n[:199] + "…" for n in names]
    shown = json.loads(answers["diff"].split("\n", 1)[0])["causes"]
    assert shown and f"causes 1 to {len(shown)} of " in answers["diff"]
    assert f'the rest: diff("torch-2.11_mnist", "torch-2.11_resnet50", causes_offset={len(shown)})' in answers["diff"]


def test_a_missing_sdk_or_lake_is_one_line_and_exit_2(tmp_path, capsys):
    from tracelake.cli.main import main

    code = ("import sys; sys.modules['mcp'] = None  # as if it were not installed\n"
            "from tracelake.cli.main import main\n"
            f"sys.exit(main(['mcp', '--lake', {str(tmp_path)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", "error  tracelake mcp needs the MCP SDK: pip install 'tracelake[mcp]'\n")
    assert main(["mcp", "--lake", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "not a tracelake lake" in err
