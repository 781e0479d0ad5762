"""A pin set's pins completed for its pinned mlx-lm: the choice added to the pins (and keyed
with them), named in ``chosen``; the recorded answer used, and said so, when the index cannot
be reached; the index's PEP 691/700 facts and a wheel's Requires-Dist read. No network."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from harness.runner.pin_companions import Release
from harness.runner.pin_env import EnvKind, PinEnvSpec, env_key
from harness.runner.pin_index import IndexFactsError, releases_of, requires_of
from harness.runner.pin_resolve import completed, resolve_companions, with_backend
from tests.runner import recorded_releases as recorded

CHECKOUT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))


def _unreachable(package: str, index_url: str | None = None) -> list[Release]:
    raise IndexFactsError("https://pypi.org/simple/mlx/: cannot reach the index")


def test_the_choice_is_added_to_the_pins_and_named() -> None:
    spec = PinEnvSpec("old", ("mlx-lm==0.31.1",))
    found = resolve_companions(spec, recorded.releases, recorded.requires, "linux")
    done = completed(spec, found)
    assert done.pins == ("mlx-lm==0.31.1", "mlx==0.31.0", "mlx-cpu==0.31.0")
    assert done.declared_pins() == ("mlx-lm==0.31.1",)
    assert [line.split(" ", 1)[0] for line in done.chosen] == ["mlx==0.31.0", "mlx-cpu==0.31.0"]
    assert found.source == "the index"
    assert env_key(done, CHECKOUT) != env_key(spec, CHECKOUT)  # another environment


@pytest.mark.parametrize(
    "spec",
    [
        PinEnvSpec("plain", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links="/w"),
        PinEnvSpec("today", ("mlx-lm==0.32.2",)),
    ],
    ids=["no-mlx-lm", "today"],
)
def test_nothing_is_added(spec: PinEnvSpec) -> None:
    found = resolve_companions(spec, recorded.releases, recorded.requires, "linux")
    assert completed(spec, found) == spec


def test_a_folder_of_wheels_cannot_be_dated() -> None:
    spec = PinEnvSpec("old", ("mlx-lm==0.31.1",), find_links="/wheels")
    found = resolve_companions(spec, recorded.releases, recorded.requires, "linux")
    assert not found.choices
    assert found.notes[0].startswith("no index to date releases by")


def test_the_recorded_answer_serves_when_the_index_is_unreachable() -> None:
    spec = PinEnvSpec("old", ("mlx-lm==0.31.1",))
    resolve_companions(spec, recorded.releases, recorded.requires, "linux")  # records it
    again = resolve_companions(spec, _unreachable, recorded.requires, "linux")
    assert [c.pin for c in again.choices] == ["mlx==0.31.0", "mlx-cpu==0.31.0"]
    assert again.source.startswith("recorded ") and "cannot reach the index" in again.source
    # a pin the pin set now gives itself wins over the recorded choice
    pinned = PinEnvSpec("old", ("mlx-lm==0.31.1", "mlx==0.31.1"))
    mine = resolve_companions(pinned, _unreachable, recorded.requires, "linux")
    assert [c.pin for c in mine.choices] == ["mlx-cpu==0.31.0"]


def test_without_a_recorded_answer_the_failure_is_a_note() -> None:
    spec = PinEnvSpec("old", ("mlx-lm==0.31.1",))
    found = resolve_companions(spec, _unreachable, recorded.requires, "linux")
    assert not found.choices
    assert found.notes[0].startswith("companions not chosen: https://pypi.org")


def test_pep_691_files_give_first_uploads_and_yanks() -> None:
    files = [
        {
            "filename": "mlx_lm-0.31.0-py3-none-any.whl",
            "upload-time": "2026-03-07T03:49:27Z",
            "yanked": "broken",
        },
        {
            "filename": "mlx_lm-0.31.0.tar.gz",
            "upload-time": "2026-03-07T03:50:00Z",
            "yanked": "broken",
        },
        {"filename": "mlx_lm-0.31.1.tar.gz", "upload-time": "2026-03-11T02:05:00Z"},
        {"filename": "mlx_lm-0.31.1-py3-none-any.whl", "upload-time": "2026-03-11T02:02:54Z"},
        {"filename": "mlx_lm-0.31.2-py3-none-any.whl"},  # no upload-time: left out
        {"filename": "other-1.0-py3-none-any.whl", "upload-time": "2026-03-11T02:02:54Z"},
    ]
    found = releases_of(files, "mlx-lm")
    assert [(str(r.version), r.uploaded.isoformat(), r.yanked) for r in found] == [
        ("0.31.0", "2026-03-07T03:49:27+00:00", True),
        ("0.31.1", "2026-03-11T02:02:54+00:00", False),
    ]


def test_requires_dist_of_core_metadata() -> None:
    metadata = (
        "Metadata-Version: 2.4\nName: mlx-lm\nVersion: 0.31.1\n"
        'Requires-Dist: mlx>=0.30.4; platform_system == "Darwin"\n'
        "Requires-Dist: transformers>=5.0.0\n\nlong description\n"
    )
    assert requires_of(metadata) == [
        'mlx>=0.30.4; platform_system == "Darwin"',
        "transformers>=5.0.0",
    ]
    assert recorded.requires("mlx-lm", Version("0.31.1"))[0].startswith("mlx>=")


@pytest.mark.parametrize(
    ("pins", "platform", "added"),
    [
        # seen on the real index: bisect's steps pinned mlx==0.31.2 with no mlx-cpu, and
        # mlx_lm.server died on "libmlx.so: cannot open shared object file"
        (("mlx-lm==0.31.1", "mlx==0.31.2"), "linux", ("mlx-cpu==0.31.2",)),
        (("mlx==0.31.0",), "linux", ("mlx-cpu==0.31.0",)),
        (("mlx==0.31.2", "mlx-cpu==0.31.2"), "linux", ()),  # pinned already
        (("mlx-lm==0.31.1",), "linux", ()),  # no mlx pinned: the harness's mlx[cpu]
        (("mlx==0.31.2",), "darwin", ()),  # Metal is in mlx itself
        (("mlx==0.1.0",), "linux", ()),  # no mlx-cpu of that version: mlx carries it
    ],
)
def test_a_pinned_mlx_gets_its_backend(
    pins: tuple[str, ...], platform: str, added: tuple[str, ...]
) -> None:
    spec = PinEnvSpec("step", pins)
    done = with_backend(spec, recorded.releases, platform)
    assert done.pins == (*pins, *added)


def test_the_backend_follows_mlx_when_the_index_cannot_say() -> None:
    done = with_backend(PinEnvSpec("step", ("mlx==0.31.2",)), _unreachable, "linux")
    assert done.pins == ("mlx==0.31.2", "mlx-cpu==0.31.2")
