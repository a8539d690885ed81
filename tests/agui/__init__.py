"""Tests of ``streamkit.agui``: the AG-UI mapping, request, routes and fold, against the real ``HttpAgent``."""
