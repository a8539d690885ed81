"""Tests of ``streamkit.demo``: the scripted and model agents, the app, and the page in a browser."""
