"""Archive authenticators written in Python for tests/archive/test_archive_auth.py (loaded by the
archive as python:support.archive_auth:<Class>): a challenge-response one and one that fails."""

from __future__ import annotations

import hashlib
import hmac
import os

from aeron_async.archive.auth import Accept, Authenticator, Decision, Reject, SendChallenge

SECRET = b"the shared secret"


def answer(challenge: bytes, secret: bytes = SECRET) -> bytes:
    """The client's answer to a challenge: HMAC-SHA256 of it under the shared secret."""
    return hmac.new(secret, challenge, hashlib.sha256).digest()


class ChallengeAuthenticator(Authenticator):
    """Connects as b"alice" or b"bob" are challenged with a nonce; the HMAC of it under SECRET
    authenticates alice with role read and bob with role admin. Anything else is rejected."""

    def __init__(self) -> None:
        self.pending: dict[int, tuple[str, bytes]] = {}
        self.closed: list[int] = []

    def on_connect(self, session_id: int, credentials: bytes) -> Decision:
        if credentials not in (b"alice", b"bob"):
            return Reject()
        nonce = os.urandom(16)
        self.pending[session_id] = (credentials.decode(), nonce)
        return SendChallenge(nonce)

    def on_challenge_response(self, session_id: int, credentials: bytes) -> Decision:
        principal, nonce = self.pending.pop(session_id, ("", b""))
        if principal and hmac.compare_digest(credentials, answer(nonce)):
            return Accept(principal, "read" if principal == "alice" else "admin")
        return Reject()

    def on_close(self, session_id: int) -> None:
        self.pending.pop(session_id, None)


class FailingAuthenticator(Authenticator):
    """Raises for every connect: the archive must reject the session and stay up."""

    def on_connect(self, session_id: int, credentials: bytes) -> Decision:
        raise RuntimeError("the authenticator's database is down")
