"""``python -m streamkit.demo [--port 8000 ...]``: the same as ``streamkit demo``."""

import sys

from .cli import main

args = sys.argv[1:]
if args[:1] == ["demo"]:
    args = args[1:]
raise SystemExit(main(["demo", *args]))
