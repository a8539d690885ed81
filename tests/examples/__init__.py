"""Tests of the example apps in ``examples/`` (FastAPI, and the Next.js ones built with ``next build``)."""
