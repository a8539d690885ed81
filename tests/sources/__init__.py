"""Tests of ``streamkit.sources``: provider SDKs, frameworks and remote protocol servers as ChatEvents."""
