"""The figures both P/D push drivers print (pd_push.py by hand, pd_connector.py through PdConnector): one row per
run, the medians per token count, and the Markdown table. Kept in one place so the two tables stay comparable."""

import json
import statistics

from pegaflow_jvm_push.timeline import push_timing

FIGURES = ("forward_ms", "added_ms", "overlap_bytes", "overlap_time", "max_layer_lag_ms")


def add_timing(row, t0, ready_ns, on_device_ns, done_ns, layer_bytes):
    """Fills row with a successful run's figures (the timeline module explains each one)."""
    timing = push_timing(t0, ready_ns, on_device_ns, done_ns, layer_bytes)
    row.update(forward_ms=timing.forward_ms, added_ms=timing.added_ms, overlap_bytes=timing.overlap_bytes,
               overlap_time=timing.overlap_time, max_layer_lag_ms=max(timing.layer_lag_ms))


def print_run(row, run):
    print(f"run tokens={row['tokens']} #{run}{' (warm-up)' if run == 0 else ''}: "
          + json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)


def summary(tokens, kv_mib, rows):
    """The medians of the measured (non-warm-up, successful) runs of one token count, or None if there were none."""
    if not rows:
        return None
    return {"tokens": tokens, "kv_MiB": kv_mib, "runs": len(rows),
            **{k: statistics.median(r[k] for r in rows) for k in FIGURES}, "rows": rows}


def print_table(results, caption):
    print(f"\ntokens | KV MiB | forward ms | added ms | overlap (bytes) | overlap (time) | max layer lag ms   "
          f"[{caption}]")
    print("---|---|---|---|---|---|---")
    for r in results:
        print(f"| {r['tokens']} | {r['kv_MiB']:.0f} | {r['forward_ms']:.1f} | {r['added_ms']:.1f} | "
              f"{r['overlap_bytes'] * 100:.0f}% | {r['overlap_time'] * 100:.0f}% | {r['max_layer_lag_ms']:.1f} |")


def finish(out, report, failures):
    """Writes the JSON report if asked and returns the exit status (1 if any run failed)."""
    if out:
        with open(out, "w") as f:
            json.dump({**report, "failures": failures}, f, indent=1)
    if failures:
        print(f"FAIL: {failures} runs failed", flush=True)
    return 1 if failures else 0
