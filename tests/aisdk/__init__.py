"""Tests of ``streamkit.aisdk``: the UI Message Stream mapping, request, routes and fold, with the real clients."""
