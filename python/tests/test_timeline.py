"""Unit tests of the overlap arithmetic of gpu-tests/pd_push.py (pure Python: python3 -m unittest)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pegaflow_jvm_push.timeline import clock_offset, find_timeline, push_timing  # noqa: E402

MS = 1_000_000


class PushTimingTest(unittest.TestCase):
    def test_a_transfer_that_keeps_up_overlaps_all_but_the_last_layer(self):
        # 4 layers of 10 ms; each is on the decode device 2 ms after it was marked ready
        ready = [10 * MS, 20 * MS, 30 * MS, 40 * MS]
        on_device = [r + 2 * MS for r in ready]
        t = push_timing(0, ready, on_device, done_ns=42 * MS + MS // 2)
        self.assertAlmostEqual(t.forward_ms, 40.0)
        self.assertAlmostEqual(t.added_ms, 2.5)
        self.assertAlmostEqual(t.overlap_bytes, 0.75)
        # in transit 8 ms in all, 6 of them before the last layer was ready
        self.assertAlmostEqual(t.overlap_time, 6 / 8)
        self.assertEqual(t.layer_lag_ms, [2.0, 2.0, 2.0, 2.0])

    def test_a_transfer_that_starts_after_the_forward_pass_overlaps_nothing(self):
        ready = [1 * MS, 2 * MS, 3 * MS]
        on_device = [10 * MS, 11 * MS, 12 * MS]
        t = push_timing(0, ready, on_device, done_ns=12 * MS)
        self.assertEqual(t.overlap_bytes, 0.0)
        # in transit from 1 ms to 12 ms, of which 1 to 3 ms was inside the forward pass
        self.assertAlmostEqual(t.overlap_time, 2 / 11)
        self.assertAlmostEqual(t.added_ms, 9.0)

    def test_overlapping_transit_intervals_are_counted_once(self):
        ready = [0, 1 * MS]
        on_device = [5 * MS, 6 * MS]  # both in transit from 1 to 5 ms
        t = push_timing(0, ready, on_device, done_ns=6 * MS)
        self.assertAlmostEqual(t.overlap_time, 1 / 6)

    def test_bytes_weigh_layers_of_different_sizes(self):
        ready = [1 * MS, 2 * MS]
        on_device = [1 * MS + 10, 3 * MS]
        t = push_timing(0, ready, on_device, done_ns=3 * MS, layer_bytes=[3, 1])
        self.assertAlmostEqual(t.overlap_bytes, 0.75)

    def test_a_layer_that_never_arrived_is_refused(self):
        with self.assertRaises(ValueError):
            push_timing(0, [1, 2], [3, 0], done_ns=4)

    def test_mismatched_lengths_and_unordered_ready_times_are_refused(self):
        with self.assertRaises(ValueError):
            push_timing(0, [1, 2], [3], done_ns=4)
        with self.assertRaises(ValueError):
            push_timing(0, [2, 1], [3, 4], done_ns=5)
        with self.assertRaises(ValueError):
            push_timing(5, [1, 2], [3, 4], done_ns=5)


class ClockOffsetTest(unittest.TestCase):
    def test_offset_is_the_midpoint_and_uncertainty_half_the_round_trip(self):
        offset, err = clock_offset(1000, 50_000, 1200)
        self.assertEqual(offset, 1100 - 50_000)
        self.assertEqual(err, 100)
        self.assertEqual(50_000 + offset, 1100)

    def test_a_clock_going_backwards_is_refused(self):
        with self.assertRaises(ValueError):
            clock_offset(10, 0, 5)


class FindTimelineTest(unittest.TestCase):
    def test_finds_the_newest_by_request_id(self):
        view = {"recentReceives": [{"id": "r1", "requestId": "d-1", "succeeded": False},
                                   {"id": "r2", "requestId": "d-2", "succeeded": True},
                                   {"id": "r3", "requestId": "d-1", "succeeded": True}]}
        self.assertTrue(find_timeline(view, "d-2")["succeeded"])
        self.assertEqual(find_timeline(view, "d-1")["id"], "r3")
        self.assertIsNone(find_timeline(view, "d-9"))
        self.assertIsNone(find_timeline({}, "d-1"))


if __name__ == "__main__":
    unittest.main()
