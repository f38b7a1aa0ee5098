"""Added latency and overlap of one push, from per-layer timestamps (no grpc needed: unit-tested on any host).

The prefill worker records when it marked each layer ready (``time.monotonic_ns()``), the decode worker when it saw
its load_state become 1, and the decode server's ``GET /pd`` view gives, per ended receive, when each layer was on the
decode device (``recentReceives[].layerOnDeviceNanos``, the server's ``System.nanoTime()``; both are CLOCK_MONOTONIC
on Linux, and :func:`clock_offset` checks it rather than assuming it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class PushTiming:
    """What the GPU script prints per run; times in milliseconds, fractions in [0, 1]."""

    forward_ms: float  # forward start -> last layer marked ready
    added_ms: float  # last layer marked ready -> decode worker saw load_state = 1
    overlap_bytes: float  # share of the KV bytes on the decode device when the last layer became ready
    overlap_time: float  # share of the time some ready layer was in transit that fell inside the forward pass
    layer_lag_ms: List[float]  # per layer: marked ready -> on the decode device


def clock_offset(local_before_ns: int, server_ns: int, local_after_ns: int) -> Tuple[int, int]:
    """(offset, uncertainty) to add to a server time to get a local one, from one request sandwiched between two local
    readings: the server read its clock somewhere in [before, after]."""
    if local_after_ns < local_before_ns:
        raise ValueError("local clock went backwards")
    mid = (local_before_ns + local_after_ns) // 2
    return mid - server_ns, (local_after_ns - local_before_ns + 1) // 2


def _union_length(intervals: Sequence[Tuple[int, int]], lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """Length of the union of [a, b) intervals, clipped to [lo, hi) when given."""
    clipped = []
    for a, b in intervals:
        if lo is not None:
            a = max(a, lo)
        if hi is not None:
            b = min(b, hi)
        if b > a:
            clipped.append((a, b))
    clipped.sort()
    total, end = 0, None
    start = None
    for a, b in clipped:
        if end is None or a > end:
            if end is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if end is not None:
        total += end - start
    return total


def push_timing(forward_start_ns: int, ready_ns: Sequence[int], on_device_ns: Sequence[int], done_ns: int,
                layer_bytes: Optional[Sequence[int]] = None) -> PushTiming:
    """Computes one run's figures; every time on the local clock (server times already shifted by clock_offset).

    A layer is in transit from its ready time to its on-device time; a layer whose on-device time is 0 (it never
    arrived) is refused, since the figures of a failed push mean nothing."""
    n = len(ready_ns)
    if n == 0 or len(on_device_ns) != n:
        raise ValueError(f"{n} ready times but {len(on_device_ns)} on-device times")
    if any(t <= 0 for t in on_device_ns):
        raise ValueError("a layer never reached the decode device")
    if any(b < a for a, b in zip(ready_ns, ready_ns[1:])) or ready_ns[0] < forward_start_ns:
        raise ValueError("ready times must be non-decreasing and after the forward pass started")
    sizes = list(layer_bytes) if layer_bytes is not None else [1] * n
    last = ready_ns[-1]
    total = sum(sizes)
    early = sum(s for s, t in zip(sizes, on_device_ns) if t <= last)
    transit = [(r, max(r, d)) for r, d in zip(ready_ns, on_device_ns)]
    busy = _union_length(transit)
    inside = _union_length(transit, forward_start_ns, last)
    return PushTiming(
        forward_ms=(last - forward_start_ns) / 1e6,
        added_ms=(done_ns - last) / 1e6,
        overlap_bytes=early / total if total else 0.0,
        overlap_time=inside / busy if busy else 1.0,
        layer_lag_ms=[(max(r, d) - r) / 1e6 for r, d in zip(ready_ns, on_device_ns)],
    )


def find_timeline(view: dict, request_id: str) -> Optional[dict]:
    """The ended receive's timeline in a decode server's GET /pd view, found by the request id it was prepared
    with (views never show receive ids), or None while it is not there yet. The newest one wins when a request id
    was used twice."""
    found = None
    for t in view.get("recentReceives") or []:
        if t.get("requestId") == request_id:
            found = t
    return found
