"""streamkit's test suite, a package tree: shared helpers import as ``tests.support.<module>`` and
``tests.<folder>.<module>`` (no ``sys.path`` edits), fixtures live in ``conftest.py``."""
