"""tracelake.serve: `tracelake mcp`, a Model Context Protocol server over one lake, read-only
(docs/mcp.md). The lake is opened with safe SQL's locks (lake_session); each tool is a module
that answers with bounded text (answer): traces, views, query, headline, diff, perfetto; the
resources are the view reference and docs/ (resources); server registers them with the MCP SDK."""
