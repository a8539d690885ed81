"""Tests of ``streamkit.store`` and ``streamkit.resumable``: stream stores, resumable runs, reattach."""
