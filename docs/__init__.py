"""tracelake.docs: this folder's Markdown, shipped with the package so that `tracelake mcp` serves
it as resources (serve/resources.py). A regular package, not a namespace: an editable install
finds a namespace package only inside its parent's folder, and this one's parent is api/."""
