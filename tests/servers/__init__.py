"""Servers the harness's own tests start: a real OpenAI-compatible HTTP server over a
deterministic toy model, with one contract bug planted on request (``planted_openai``)."""
