"""Tests of ``streamkit.dsh``: the named-event dialect's mapping, routes and fold."""
