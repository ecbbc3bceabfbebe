"""Command-line tools (``python -m mxcy.tools.im2rec``)."""
