"""Shared by the servers the tests start (fake-github.py,
git-http-server.py), imported from beside them."""
import os
import signal


def exit_on_signals(max_seconds):
    """Exits at once, with status 0, on SIGTERM or SIGINT, and after
    max_seconds whatever happens: a server whose test died still ends."""
    def stop(signum, frame):
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(sig, stop)
    signal.alarm(max_seconds)
