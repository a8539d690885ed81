"""streamkit: stream any agent core to any frontend.

An agent core yields ``ChatEvent`` objects (:mod:`streamkit.events`); :mod:`streamkit.aisdk` maps them to the Vercel
AI SDK UI Message Stream and :mod:`streamkit.agui` to the AG-UI protocol, both through the shared SSE writer
(:mod:`streamkit.sse`) and served as Starlette routes. :mod:`streamkit.store` and :mod:`streamkit.resumable`
make streams survive dropped connections and changes of worker.
"""

import logging

__version__ = "0.1.0"

__all__ = ["__version__"]

# The library convention: silent until the app configures logging (see streamkit.events.logs).
logging.getLogger("streamkit").addHandler(logging.NullHandler())
