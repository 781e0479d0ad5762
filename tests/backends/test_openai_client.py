"""The client's readings of a stream: tokens per chunk, token-accurate gaps, merged tool calls."""

from __future__ import annotations

import pytest

from harness.backends.openai_client import Chunk, StreamReply, token_arrivals


def words(text: str) -> int:
    return len(text.split())


def chunk(t: float, text: str) -> Chunk:
    return Chunk(t, {"choices": [{"index": 0, "delta": {"content": text}}]}, text)


# (name, chunks (time, text), counter, tokens per chunk, inter-token gaps, decode tok/s)
ARRIVALS = [
    ("one_a_chunk", [(0.5, "a"), (0.6, " b"), (0.7, " c")], words, (1, 1, 1), [0.1, 0.1], 10.0),
    # three tokens in one chunk after 0.3 s: three gaps of 0.1 s, not one gap of 0.3 s
    ("several_a_chunk", [(0.5, "a"), (0.8, " b c d")], words, (1, 3), [0.1, 0.1, 0.1], 10.0),
    # a word cut across chunks is counted once, when it completes
    ("cut_word", [(1.0, "hel"), (1.1, "lo"), (1.2, " world")], words, (1, 0, 1), [0.2], 5.0),
    ("no_tokenizer", [(0.5, "a"), (0.8, " b c d")], None, (1, 1), [0.3], 1 / 0.3),
    (
        "empty_chunks_skipped",
        [(0.1, ""), (0.5, "a"), (0.6, ""), (0.7, " b")],
        words,
        (1, 1),
        [0.2],
        5.0,
    ),
]


@pytest.mark.parametrize(
    ("chunks", "counter", "per_chunk", "gaps", "tps"),
    [a[1:] for a in ARRIVALS],
    ids=[a[0] for a in ARRIVALS],
)
def test_token_arrivals(chunks, counter, per_chunk, gaps, tps) -> None:  # type: ignore[no-untyped-def]
    arrivals = token_arrivals([chunk(t, x) for t, x in chunks], counter)
    assert arrivals.chunk_tokens == per_chunk
    assert arrivals.inter_token_s() == pytest.approx(gaps)
    assert arrivals.decode_tps() == pytest.approx(tps)
    assert arrivals.ttft_s == pytest.approx(next(t for t, x in chunks if x))
    assert arrivals.counted_by == ("chunks" if counter is None else "tokenizer")


def test_streamed_tool_calls_merge_by_index() -> None:
    fragments = [
        {"index": 0, "id": "c0", "type": "function", "function": {"name": "get", "arguments": ""}},
        {"index": 1, "id": "c1", "function": {"name": "put", "arguments": '{"k"'}},
        {"index": 0, "function": {"arguments": '{"city": '}},
        {"index": 0, "function": {"arguments": '"Paris"}'}},
        {"index": 1, "function": {"arguments": ": 1}"}},
    ]
    chunks = tuple(
        Chunk(i, {"choices": [{"delta": {"tool_calls": [f]}}]}, "") for i, f in enumerate(fragments)
    )
    reply = StreamReply(200, chunks, 1.0, True)
    assert reply.tool_calls == [
        {
            "id": "c0",
            "type": "function",
            "function": {"name": "get", "arguments": '{"city": "Paris"}'},
        },
        {"id": "c1", "function": {"name": "put", "arguments": '{"k": 1}'}},
    ]


def test_stream_reply_reads_finish_reason_and_usage_from_any_chunk() -> None:
    chunks = (
        chunk(0.1, "hi"),
        Chunk(0.2, {"choices": [{"delta": {}, "finish_reason": "stop"}]}, ""),
        Chunk(0.3, {"choices": [], "usage": {"completion_tokens": 1}}, ""),
        Chunk(0.4, None, "not json"),
    )
    reply = StreamReply(200, chunks, 0.4, True)
    assert (reply.content, reply.finish_reason, dict(reply.usage)) == (
        "hi",
        "stop",
        {"completion_tokens": 1},
    )
