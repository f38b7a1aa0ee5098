"""PdConnector's parts that need no server: settings, the kv_transfer_params formats, and the scheduler side's answers
to vLLM (pega-server itself is exercised by pd_connector_driver.py). Skipped where grpcio is missing."""

import importlib.util
import os
import sys
import unittest
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

HAVE_GRPC = importlib.util.find_spec("grpc") is not None and importlib.util.find_spec("google.protobuf") is not None


@unittest.skipUnless(HAVE_GRPC, "grpcio and protobuf are needed (Debian: python3-grpcio)")
class ConnectorUnitTest(unittest.TestCase):
    def setUp(self):
        from pegaflow_jvm_pd.config import PdConfig
        from pegaflow_jvm_pd.scheduler import PdScheduler

        self.config = PdConfig.from_extra({"pega_address": "127.0.0.1:1"}, "engine-a")
        self.scheduler = PdScheduler(self.config, block_size=16, tp_size=2, dispatcher=_NoDispatch())

    def test_settings_default_to_the_engine_id_and_refuse_unknown_or_bad_keys(self):
        from pegaflow_jvm_pd.config import PdConfig

        self.assertEqual(self.config.instance_id, "engine-a")
        self.assertEqual(self.config.prefill_http_timeout_s, self.config.receive_timeout_s)
        with self.assertRaisesRegex(ValueError, r"unknown key\(s\) \['pega_adress'\]"):
            PdConfig.from_extra({"pega_adress": "x:1"}, "e")
        with self.assertRaisesRegex(ValueError, "pega_address: expected host:port"):
            PdConfig.from_extra({"pega_address": "nohost"}, "e")
        with self.assertRaisesRegex(ValueError, "receive_timeout_s: expected a positive number"):
            PdConfig.from_extra({"receive_timeout_s": 0}, "e")

    def test_push_params_round_trip_and_bad_ones_are_refused_with_the_field(self):
        from pegaflow_jvm_pd import params

        p = params.PushParams(b"\x01\x02", 2, 5, "d-1")
        self.assertEqual(params.push_params(p.to_dict()), p)
        with self.assertRaisesRegex(ValueError, "kv_transfer_params.pd_push"):
            params.push_params({"pd_push": {"handshake": "!!", "blocks": 1}})
        with self.assertRaisesRegex(ValueError, "pd_prefill_url: expected an http"):
            params.decode_params({"pd_prefill_url": "file:///etc/passwd"})

    def test_a_decode_request_loads_the_rest_of_its_prompt_asynchronously_once(self):
        r = _request("d", 100, {"pd_prefill_url": "http://p:1"})
        self.assertEqual(self.scheduler.get_num_new_matched_tokens(r, 0), (100, True))
        self.assertEqual(self.scheduler.get_num_new_matched_tokens(r, 32), (68, True))  # a local prefix hit
        self.scheduler.update_state_after_alloc(r, _Blocks(list(range(10, 17))), 68)
        meta = self.scheduler.build_connector_meta(SimpleNamespace(num_scheduled_tokens={}))
        recv = meta.recvs["d"]
        self.assertEqual(recv.block_ids, (12, 13, 14, 15, 16))  # the two locally cached blocks are skipped
        self.assertEqual(len(recv.load_state_shm), 2)  # one per TP rank
        # back after a failed receive with nothing computed: vLLM asks again, and the answer is "compute it here"
        self.assertEqual(self.scheduler.get_num_new_matched_tokens(r, 0), (0, False))
        self.scheduler.update_connector_output(SimpleNamespace(finished_recving={"d"}, finished_sending=None))
        for name in recv.load_state_shm:
            self.assertFalse(os.path.exists("/dev/shm/" + name))  # the scheduler unlinked its objects

    def test_a_prefill_request_is_pushed_whole_or_aborted_and_keeps_its_blocks_until_the_push_ended(self):
        from pegaflow_jvm_pd import params

        push = params.PushParams(b"hs", 1, 3, "d").to_dict()
        whole, chunked = _request("p1", 60, push), _request("p2", 60, push)
        for r in (whole, chunked):
            self.assertEqual(self.scheduler.get_num_new_matched_tokens(r, 0), (0, False))
            self.scheduler.update_state_after_alloc(r, _Blocks([7, 8, 9, 10]), 0)
        meta = self.scheduler.build_connector_meta(SimpleNamespace(num_scheduled_tokens={"p1": 60, "p2": 32}))
        self.assertEqual(meta.pushes["p1"].block_ids, (8, 9, 10))
        self.assertEqual(meta.pushes["p1"].abort_reason, "")
        self.assertIn("chunked prefill", meta.pushes["p2"].abort_reason)
        self.assertTrue(self.scheduler.has_pending_push_work())
        self.assertEqual(self.scheduler.request_finished(whole, ([7, 8, 9, 10],)), (True, None))
        self.scheduler.update_connector_output(SimpleNamespace(finished_recving=None, finished_sending={"p1", "p2"}))
        self.assertFalse(self.scheduler.has_pending_push_work())

    def test_a_decode_request_naming_a_prefill_instance_not_allowed_is_computed_locally(self):
        from pegaflow_jvm_pd.config import PdConfig
        from pegaflow_jvm_pd.scheduler import PdScheduler

        config = PdConfig.from_extra({"allowed_prefill_urls": ["http://p0:8100/"]}, "e")
        scheduler = PdScheduler(config, block_size=16, tp_size=1, dispatcher=_NoDispatch())
        self.assertEqual(scheduler.get_num_new_matched_tokens(_request("a", 40, {"pd_prefill_url": "http://p0:8100"}),
                                                              0), (40, True))
        self.assertEqual(scheduler.get_num_new_matched_tokens(_request("b", 40, {"pd_prefill_url": "http://evil:80"}),
                                                              0), (0, False))
        self.assertEqual(scheduler.get_num_new_matched_tokens(_request("c", 40, {"pd_prefill_url": "ftp://x"}), 0),
                         (0, False))
        with self.assertRaisesRegex(ValueError, "allowed_prefill_urls: expected a list"):
            PdConfig.from_extra({"allowed_prefill_urls": "http://p0:8100"}, "e")

    def test_a_worker_that_cannot_map_its_load_state_reports_the_blocks_as_load_errors_in_the_same_pass(self):
        from pegaflow_jvm_pd.metadata import PdMetadata, RecvMeta
        from pegaflow_jvm_pd.worker import PdWorker

        worker = PdWorker(self.config, 0, 1)
        try:
            worker.bind_step(PdMetadata(recvs={"x": RecvMeta(("pega_load_" + "0" * 32,), (3, 4), 5.0)}))
            self.assertEqual(worker.get_finished(set()), (None, {"x"}))
            self.assertEqual(worker.get_block_ids_with_load_errors(), {3, 4})
            self.assertEqual(worker.get_block_ids_with_load_errors(), set())  # reported once
        finally:
            worker.shutdown()

    def test_the_connector_imports_without_vllm_on_a_stand_in_that_says_so(self):
        from pegaflow_jvm_pd import _vllm

        if _vllm.HAVE_VLLM:
            self.skipTest("vLLM is installed here")
        self.assertIn("Stand-in", _vllm.KVConnectorBase_V1.__doc__)
        self.assertEqual([r.name for r in _vllm.KVConnectorRole], ["SCHEDULER", "WORKER"])

    def tearDown(self):
        self.scheduler.shutdown()


class _NoDispatch:
    def __init__(self):
        self.submitted = []

    def submit(self, *args):
        self.submitted.append(args)

    def cancel(self, receive):
        pass

    def shutdown(self):
        pass


class _Blocks:
    def __init__(self, ids):
        self.ids = ids

    def get_block_ids(self):
        return (list(self.ids),)


def _request(rid, tokens, params):
    return SimpleNamespace(request_id=rid, prompt_token_ids=list(range(tokens)), num_prompt_tokens=tokens,
                           num_computed_tokens=0, kv_transfer_params=params)


if __name__ == "__main__":
    unittest.main()
