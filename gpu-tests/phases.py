"""The server's per-phase Save and Load timers (pegaflow_save_phase_seconds, pegaflow_load_phase_seconds, see
docs/metrics.md), read from /actuator/prometheus before and after a measurement: each phase's mean per request, in ms.

  before = scrape(http); ...; after = scrape(http); rows = breakdown(before, after)
"""

import re
import urllib.request

SAVE_PHASES = ("receive", "parse", "decode", "validate", "index", "allocate", "plan", "copy", "seal", "reply")
LOAD_PHASES = ("receive", "parse", "decode", "validate", "lease", "queue", "plan", "copy", "signal", "reply")
_SAMPLE = re.compile(r'^(pegaflow_(?:save|load)_phase_seconds|pegaflow_rpc_duration_seconds|'
                     r'pegaflow_save_duration_seconds|pegaflow_load_duration_seconds)_(sum|count)\{?([^}]*)\}?\s+(\S+)$')


def scrape(http):
    """{(family, labels-without-status, 'sum'|'count'): value}; None when the server has no metrics endpoint."""
    text = None
    for path in ("/actuator/prometheus", "/metrics"):
        try:
            text = urllib.request.urlopen(f"http://{http}{path}", timeout=5).read().decode()
            break
        except Exception:  # noqa: BLE001
            continue
    return None if text is None else parse(text)


def parse(text):
    """The samples of one Prometheus text scrape that breakdown() reads."""
    out = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m:
            continue
        family, kind, labels, value = m.groups()
        tags = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if family == "pegaflow_rpc_duration_seconds":
            if tags.get("status") != "ok":
                continue
            key = (family, tags.get("method", ""))
        else:
            key = (family, tags.get("phase", ""))
        out[key + (kind,)] = out.get(key + (kind,), 0.0) + float(value)
    return out


def mean_ms(before, after, family, label=""):
    """Mean duration in ms of what one series recorded between two scrapes; None when it recorded nothing."""
    if not before or not after:
        return None
    dc = after.get((family, label, "count"), 0) - before.get((family, label, "count"), 0)
    ds = after.get((family, label, "sum"), 0) - before.get((family, label, "sum"), 0)
    return ds / dc * 1e3 if dc > 0 else None


def breakdown(before, after):
    """{'save': {phase: ms}, 'load': {phase: ms}, 'save_rpc_ms', 'load_rpc_ms', 'engine_save_ms', 'engine_load_ms'}."""
    if not before or not after:
        return None
    out = {"save": {}, "load": {}}
    for op, phases in (("save", SAVE_PHASES), ("load", LOAD_PHASES)):
        for p in phases:
            v = mean_ms(before, after, f"pegaflow_{op}_phase_seconds", p)
            if v is not None:
                out[op][p] = round(v, 3)
        rpc = mean_ms(before, after, "pegaflow_rpc_duration_seconds", op)
        out[f"{op}_rpc_ms"] = None if rpc is None else round(rpc, 3)
        eng = mean_ms(before, after, f"pegaflow_{op}_duration_seconds")
        out[f"engine_{op}_ms"] = None if eng is None else round(eng, 3)
    return out


def table(rows):
    """Markdown: one row per (label, breakdown), Save phases then Load phases, mean ms per request."""
    lines = []
    for op, phases in (("save", SAVE_PHASES), ("load", LOAD_PHASES)):
        lines.append(f"| {op} (mean ms per request) | RPC | " + " | ".join(phases) + " | sum of phases |")
        lines.append("|---|---" + "|---" * (len(phases) + 1) + "|")
        for label, b in rows:
            if not b or not b.get(op):
                continue
            cells = [b[op].get(p) for p in phases]
            total = sum(c for c in cells if c is not None)
            lines.append(f"| {label} | {b.get(op + '_rpc_ms', '-')} | "
                         + " | ".join("-" if c is None else f"{c:.3f}" for c in cells) + f" | {total:.3f} |")
        lines.append("")
    return "\n".join(lines)
