"""The package's version (one place: the package face and the telemetry's instrumentation scope read it)."""

__version__ = "0.1.0"
