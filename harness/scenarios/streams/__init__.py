"""The streamed-request load engine the serving family shares (``serving``, ``saturation``,
``stall``, ``soak``, ``trace_replay``, ``cancellation``): arrival schedules, the event loop that
sends, per-point statistics and metrics, the artifacts each request leaves, and the SLO
thresholds. A shared package, not a scenario: it is named in ``SHARED_PACKAGES``."""
