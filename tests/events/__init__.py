"""Tests of ``streamkit.events``: the sequence checker, human-in-the-loop helpers and logs."""
