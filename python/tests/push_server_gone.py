"""A decode worker whose own push server dies: PushClient.wait must raise PushServerGone, not wait out its deadline.

Usage: PYTHONPATH=python python3 python/tests/push_server_gone.py <server host:port>
Waits on a state object nothing will write: first briefly with the server up (PushTimeout), then prints WAITING and
waits with a 60 s deadline while the caller SIGKILLs the server. Prints GONE <seconds> and exits 0 when
PushServerGone came well before the deadline. Run by PushPythonClientTest (pega-push) against a real server process.
"""

import sys
import time

import pegaflow_jvm_push as push


def main() -> int:
    client = push.PushClient(sys.argv[1], rpc_timeout_s=5.0)
    state = push.StateObject()
    try:
        if not client.server_alive(10.0):
            print("FAIL: the server cannot be reached at the start")
            return 1
        try:
            client.wait(state, timeout_s=1.0)
            print("FAIL: a state nobody writes returned a verdict")
            return 1
        except push.PushTimeout:
            pass  # the server is up and nothing wrote the object: the deadline is what ends this wait
        print("WAITING", flush=True)
        t0 = time.monotonic()
        try:
            verdict = client.wait(state, timeout_s=60.0)
            print(f"FAIL: verdict {verdict} from a dead server")
            return 1
        except push.PushServerGone as e:
            took = time.monotonic() - t0
            print(f"GONE {took:.2f} ({e})", flush=True)
            return 0 if took < 30.0 else 1
        except push.PushTimeout:
            print("FAIL: waited out the deadline although the server was gone")
            return 1
    finally:
        state.close()
        client.close()


if __name__ == "__main__":
    sys.exit(main())
