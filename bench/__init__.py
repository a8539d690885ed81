"""streamkit's benchmarks: encode speed against the peers and the orjson floor, the wire, concurrency.

Run them with ``python -m bench`` (``python -m bench --help`` for the flags). They are not part of the
test suite. Every ratio is taken against baselines measured in the same process, in the same run.
"""
