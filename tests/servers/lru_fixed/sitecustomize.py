"""Planted into mlx_lm.server (``PYTHONPATH`` = this folder): its ``LRUPromptCache`` refreshes an
entry's recency when a fetch uses it, as mlx-lm issue #1495 asks (and the fork's fix, upstream
PR #1496, does). The real server with this one change is the "fixed" side the HTTP LRU-order
probe must pass on, beside the released server it fails on."""

from __future__ import annotations

from typing import Any


def _used_key(lru: Any, model: Any, tokens: list[int]) -> list[int] | None:
    """The stored tokens ``fetch_nearest_cache`` serves ``tokens`` from (its own rule)."""
    from mlx_lm.models.cache import can_trim_prompt_cache

    result = lru._trie.search(model, tokens)
    if result.exact is not None:
        return list(result.exact)
    short = len(result.shorter) if result.shorter is not None else 0
    if result.longer is not None and result.common_prefix > short:
        entry = lru._trie.get(result.model, result.longer)
        if can_trim_prompt_cache(entry.prompt_cache):
            return list(result.longer)
    return list(result.shorter) if short > 0 else None


def _install() -> None:
    try:
        from mlx_lm.models.cache import LRUPromptCache
    except ImportError:  # not the server's interpreter: nothing to plant
        return
    fetch = LRUPromptCache.fetch_nearest_cache

    def fetch_and_touch(self: Any, model: Any, tokens: list[int]) -> Any:
        used = _used_key(self, model, tokens)
        found = fetch(self, model, tokens)
        if used is not None:
            entry = self._trie.get(model, used)
            self._lru.remove(model, used)
            self._lru.push(model, used, entry.cache_type)
        return found

    LRUPromptCache.fetch_nearest_cache = fetch_and_touch


_install()
