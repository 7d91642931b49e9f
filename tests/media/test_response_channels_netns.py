"""Response channels through a NAT (docs/architecture.md, "Response channels"): the client's host has a
private address that an nftables masquerade rule translates (with random ports) on the way out, and the
server's host has no route to it. The server sees only the translated address, and its answer still reaches
the client: every hop answers the address it observed (RSP_SETUP the request's source, the response
publication the source of the client's first status message), never one it was told."""

from __future__ import annotations

import pytest

from aeron_async.bench import netns
from conftest import new_aeron_dir, run_proc

pytestmark = pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))


def test_response_reaches_a_client_behind_a_masquerade() -> None:
    with netns.two_hosts() as (client_host, server_host):
        private = f"10.99.{client_host.address.split('.')[2]}.1"
        client_host.masquerade(private)
        server = client = None
        try:
            server = run_proc("response_peer.py", "server", new_aeron_dir(), server_host.address, 40500, 40501,
                              prefix=server_host.command(), stdin=True)
            assert server.stdout is not None and server.stdin is not None
            assert server.stdout.readline().strip() == "ready"
            client = run_proc("response_peer.py", "client", new_aeron_dir(), server_host.address, 40500, 40501,
                              private, prefix=client_host.command())
            client_out, _ = client.communicate(timeout=60)
            assert client.returncode == 0, client_out
            assert "answer re:ping" in client_out
            server.stdin.close()   # the server ends
            server.wait(timeout=30)
            server_out = server.stdout.read()
            assert server.returncode == 0, server_out
            # the server saw the translated address (the client host's own), never the private one
            assert f"image {client_host.address}:" in server_out, server_out
            assert private not in server_out
            assert client_host.masqueraded() >= 2   # the request's and the response subscription's sockets
        finally:
            for proc in (server, client):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.wait(timeout=10)
