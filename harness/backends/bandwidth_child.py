"""``python -m harness.backends.bandwidth_child``: measure the device's ceilings in a process of
its own and print them as one JSON line (:meth:`Bandwidth.to_json`).

The worker runs it (:func:`harness.backends.bandwidth.measure_in_child`) so that the
measurement's buffers never count in a case's memory peak (MLX's peak, the process's RSS
high-water mark), even when it re-measures after a case's runs. ``--device`` is the kind of
the worker's mlx device, so both measure the same device.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness.backends.bandwidth import BUFFER_BYTES, BURSTS, CHILD, measure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="harness.backends.bandwidth_child")
    parser.add_argument("--device", choices=("cpu", "gpu"), required=True)
    parser.add_argument("--buffer-bytes", type=int, default=BUFFER_BYTES)
    parser.add_argument("--bursts", type=int, default=BURSTS)
    parser.add_argument("--reason", default="asked")
    args = parser.parse_args(argv)
    import mlx.core as mx

    mx.set_default_device(mx.gpu if args.device == "gpu" else mx.cpu)
    found = measure(args.buffer_bytes, args.bursts, args.reason)
    if found is None:
        print("mlx is not loaded", file=sys.stderr)
        return 1
    print(json.dumps({**found.to_json(), "measured_in": CHILD}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
