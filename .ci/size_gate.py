"""Fail when a source module grows past the line budget (STYLE.md practice 15)."""
import pathlib
import sys

LIMIT = 600
root = pathlib.Path(__file__).resolve().parent.parent
too_long = []
for path in sorted(root.glob('mxcy/**/*')):
    if path.suffix in ('.py', '.pyx', '.pxd', '.pxi'):
        n = sum(1 for _ in path.open(encoding='utf-8'))
        if n > LIMIT:
            too_long.append((n, path.relative_to(root)))
for n, path in too_long:
    print(f"size gate: {path} has {n} lines (limit {LIMIT}); split it")
sys.exit(1 if too_long else 0)
