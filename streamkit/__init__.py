"""streamkit: stream any agent core to any frontend.

An agent core yields ``ChatEvent`` objects (:mod:`streamkit.events`); :mod:`streamkit.aisdk` maps them to the Vercel
AI SDK UI Message Stream and :mod:`streamkit.agui` to the AG-UI protocol, both through the shared SSE writer
(:mod:`streamkit.frames`, :mod:`streamkit.sse`) and served as Starlette routes by the one endpoint of
:mod:`streamkit.serve`, whose :class:`StreamOptions` every protocol's ``routes(agent, options=...)`` takes.
:mod:`streamkit.store` and :mod:`streamkit.resumable` make streams survive dropped connections and changes of
worker. :mod:`streamkit.testing` checks any stream as the real clients read it (``streamkit check`` on the
command line) and helps test an agent.
"""

from ._version import __version__
from .serve import StreamOptions

__all__ = ["StreamOptions", "__version__"]
