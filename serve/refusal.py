"""What a tool says instead of an answer: a request it does not run, or a query that failed or was
stopped at a limit, in one line (the server turns it into the MCP error result)."""


class Refusal(Exception):
    """One line for the caller: what was refused or went wrong, and what to run instead."""
