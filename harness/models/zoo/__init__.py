"""Tiny random-weight models with real tokenizers, one per architecture family the suites cover."""
