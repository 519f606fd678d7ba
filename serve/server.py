"""The MCP server of one lake, on the official Python SDK (`mcp`, docs/mcp.md): the tools, each a
function of the lake session whose Refusal becomes an error result of one line, marked read-only,
and the resources; served on stdio until the client closes it."""

from __future__ import annotations

import functools
import inspect
import typing

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.resources import TextResource
from mcp.types import ToolAnnotations

from ..lake.version import __version__
from . import diff, headline, perfetto, query, resources, traces, views
from .lake_session import LakeSession
from .refusal import Refusal

INSTRUCTIONS = (
    "tracelake answers questions about GPU deep-learning traces (Nsight Systems exports, PyTorch "
    "profiler traces) kept in one lake: where the GPU time goes, why the GPU sits idle, what bounds a "
    "training step, what changed between two runs. Start with list_traces, then headline(trace) for a "
    "trace's step time, what bounds it, GPU idle and its causes, and its findings with advice; query runs "
    "read-only SQL over the lake's documented views (list_views, describe_view); diff compares two traces "
    "or runs; perfetto_places says where to look in the Perfetto UI. Columns name their unit: *_ns are "
    "integer nanoseconds, *_pct percentages. Every answer is bounded and ends with `next:`, the call to "
    "make next.")
TOOLS = (
    (traces.list_traces, traces.DESCRIPTION),
    (headline.headline, headline.DESCRIPTION),
    (views.list_views, views.LIST_DESCRIPTION),
    (views.describe_view, views.DESCRIBE_DESCRIPTION),
    (query.query, query.DESCRIPTION),
    (diff.diff, diff.DESCRIPTION),
    (perfetto.perfetto_places, perfetto.DESCRIPTION),
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def build(session: LakeSession) -> MCPServer:
    server = MCPServer(name="tracelake", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for fn, description in TOOLS:
        server.add_tool(_bound(fn, session), name=fn.__name__, description=description, annotations=READ_ONLY,
                        structured_output=False)

    @server.resource(resources.VIEWS_URI, name="views", mime_type="text/markdown",
                     description="Every table, view and macro of the lake with what it answers")
    def view_reference() -> str:
        return resources.view_reference()

    @server.resource(resources.VIEW_URI, name="view", mime_type="text/markdown",
                     description="One table or view: what it answers, its columns with units, an example query")
    def view(name: str) -> str:
        try:
            return views.describe_view(session, name)
        except Refusal as e:
            raise ResourceError(str(e)) from None

    for file_name, text in resources.docs().items():
        server.add_resource(TextResource(uri=resources.DOC_URI.format(name=file_name), name=file_name, text=text,
                                         mime_type="text/markdown", description=f"tracelake's docs/{file_name}"))
    return server


def _bound(fn, session: LakeSession):
    """`fn` with the session bound: the MCP SDK sees its other parameters (their types resolved), and a
    Refusal comes out as a ToolError, an error result with its line."""

    @functools.wraps(fn)
    def call(**arguments):
        try:
            return fn(session, **arguments)
        except Refusal as e:
            raise ToolError(str(e)) from None

    hints = typing.get_type_hints(fn)
    parameters = [p.replace(annotation=hints[p.name]) for p in list(inspect.signature(fn).parameters.values())[1:]]
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)
    call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": str}
    return call


def serve(session: LakeSession) -> None:
    """Answer on stdin/stdout until the client closes them."""
    build(session).run("stdio")
