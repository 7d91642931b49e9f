"""Who may use an archive (docs/security.md, "The archive"; reference: Aeron Archive's
Authenticator, CredentialsSupplier and AuthorisationService).

Archive side: an archive launched with ``authenticator="credentials"`` checks the
``principal:secret`` a client connects with against ``principal:secret:role`` entries (a file of
the archive's user, mode 600, or the environment); one launched with
``authenticator="python:module:Class"`` asks an `Authenticator` written in Python. Each session's
role decides which requests it may make: ``admin`` all, ``record`` also start, stop and extend
recordings, ``read`` listings, positions and replays; another request is refused with
UNAUTHORISED_ACTION.

A Python authenticator never runs on the archive's threads: the conductor queues each connect and
challenge response, `AuthenticatorWorker` (a Python thread of the process that launched the
archive) takes them, calls the authenticator and queues its decision, which the conductor applies
on a later duty cycle. A session without a decision within the archive's connect timeout is closed.

Client side: `AeronArchive.connect(credentials=...)` takes bytes or a `CredentialsSupplier`; left
out, the credentials come from ``AERON_ARCHIVE_CLIENT_CREDENTIALS`` or the file named by
``AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE`` (never a command line, where ``ps`` shows them).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any, Final

import attrs

from .._ffi import ffi, lib
from .._python_classes import load_class, qualified
from .._secret_files import read_secret_file
from ..errors import ConfigurationError

ROLES: Final = ("admin", "record", "read")
CLIENT_CREDENTIALS_ENV: Final = "AERON_ARCHIVE_CLIENT_CREDENTIALS"
CLIENT_CREDENTIALS_FILE_ENV: Final = "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE"
CREDENTIALS_FILE_MAX: Final = 1024 * 1024   # as the archive's credentials file (aa_archive_auth.c)
PYTHON_PREFIX: Final = "python:"

_log = logging.getLogger("aeron_async.archive")


# --- what an authenticator decides ---------------------------------------------------------------

@attrs.frozen
class Accept:
    """Authenticate the session as `principal` with `role` (admin, record or read)."""

    principal: str = ""
    role: str = "admin"

    def __attrs_post_init__(self) -> None:
        if self.role not in ROLES:
            raise ConfigurationError(f"role {self.role!r} is not one of {', '.join(ROLES)}")


@attrs.frozen
class SendChallenge:
    """Send the client this challenge; its answer comes to `on_challenge_response`."""

    challenge: bytes


@attrs.frozen
class Reject:
    """Reject the session: the client gets AUTHENTICATION_REJECTED."""


Decision = Accept | SendChallenge | Reject


class Authenticator:
    """An archive authenticator written in Python. Subclass it and name it when launching the
    archive: ``Archive.launch(..., authenticator="python:mymodule:MyAuthenticator")``. The class
    is made once (no arguments), and its methods run on one Python thread, never the archive's."""

    def on_connect(self, session_id: int, credentials: bytes) -> Decision:
        """A client connected with `credentials` (empty when it gave none)."""
        return Reject()

    def on_challenge_response(self, session_id: int, credentials: bytes) -> Decision:
        """The client's answer to this authenticator's challenge."""
        return Reject()

    def on_close(self, session_id: int) -> None:
        """The session ended (forget what was kept about it)."""


def load_authenticator(value: str) -> Authenticator:
    """The instance of the class an authenticator option names (python:module:Class)."""
    cls = load_class(value[len(PYTHON_PREFIX):], "archive authenticator", "python:mymodule:MyAuthenticator")
    instance = cls()
    for method in ("on_connect", "on_challenge_response"):
        if not callable(getattr(instance, method, None)):
            raise ConfigurationError(f"archive authenticator {qualified(cls)} has no {method}(session_id, credentials) "
                                     "method: subclass aeron_async.archive.auth.Authenticator")
    return instance  # type: ignore[no-any-return]


class AuthenticatorWorker:
    """The Python thread that serves an archive's Python authenticator (see the module's text)."""

    def __init__(self, archive_ptr: Any, authenticator: Authenticator) -> None:
        self._ptr = archive_ptr
        self.authenticator = authenticator
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="archive-authenticator", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (before the archive closes)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        event = ffi.new("aa_archive_auth_event_t *")
        while not self._stop.is_set():
            if lib.aa_archive_auth_poll(self._ptr, event, 100) != 1:
                continue
            data = bytes(ffi.buffer(event.data, event.length))
            self._handle(int(event.kind), int(event.session_id), data)

    def _handle(self, kind: int, session_id: int, data: bytes) -> None:
        method: Callable[[int, bytes], object]
        if kind == lib.AA_ARCHIVE_AUTH_EVENT_CLOSED:
            try:
                self.authenticator.on_close(session_id)
            except Exception:
                _log.exception("archive authenticator %s: on_close(%d) failed", qualified(type(self.authenticator)),
                               session_id)
            return
        if kind == lib.AA_ARCHIVE_AUTH_EVENT_CONNECT:
            method = self.authenticator.on_connect
        else:
            method = self.authenticator.on_challenge_response
        try:
            decision = method(session_id, data)
        except Exception:
            _log.exception("archive authenticator %s failed for session %d: the session is rejected",
                           qualified(type(self.authenticator)), session_id)
            decision = Reject()
        self.answer(session_id, decision)

    def answer(self, session_id: int, decision: object) -> None:
        if isinstance(decision, Accept):
            principal = decision.principal.encode()
            rc = lib.aa_archive_auth_answer(self._ptr, session_id, lib.AA_ARCHIVE_AUTH_ACCEPT, principal,
                                            len(principal), ROLES.index(decision.role))
        elif isinstance(decision, SendChallenge):
            rc = lib.aa_archive_auth_answer(self._ptr, session_id, lib.AA_ARCHIVE_AUTH_CHALLENGE, decision.challenge,
                                            len(decision.challenge), 0)
        else:
            if not isinstance(decision, Reject):
                _log.error("archive authenticator %s returned %r for session %d, not Accept, SendChallenge or Reject: "
                           "the session is rejected", qualified(type(self.authenticator)), decision, session_id)
            rc = lib.aa_archive_auth_answer(self._ptr, session_id, lib.AA_ARCHIVE_AUTH_REJECT, ffi.NULL, 0, 0)
        if rc < 0:
            _log.error("archive authenticator %s: %s; session %d is rejected", qualified(type(self.authenticator)),
                       ffi.string(lib.aa_errmsg()).decode(errors="replace"), session_id)
            lib.aa_archive_auth_answer(self._ptr, session_id, lib.AA_ARCHIVE_AUTH_REJECT, ffi.NULL, 0, 0)


# --- the client's credentials ---------------------------------------------------------------------

class CredentialsSupplier:
    """The credentials a client connects with, and its answer to a challenge (Aeron's
    CredentialsSupplier). `credentials` are sent in the connect request; `on_challenge`, when given,
    answers each challenge of the archive."""

    def __init__(self, credentials: bytes = b"", on_challenge: Callable[[bytes], bytes] | None = None) -> None:
        self._credentials = bytes(credentials)
        self._on_challenge = on_challenge

    def encoded_credentials(self) -> bytes:
        return self._credentials

    def answers_challenges(self) -> bool:
        """Whether `on_challenge` answers (a subclass overriding it does)."""
        return self._on_challenge is not None or type(self).on_challenge is not CredentialsSupplier.on_challenge

    def on_challenge(self, challenge: bytes) -> bytes:
        """The answer to `challenge`."""
        if self._on_challenge is None:
            raise ConfigurationError("this CredentialsSupplier does not answer challenges: give it on_challenge=")
        return self._on_challenge(challenge)

    def __repr__(self) -> str:
        return f"<CredentialsSupplier {'with' if self._credentials else 'without'} credentials>"


def read_credentials_file(path: str) -> bytes:
    """A client credentials file's content (its last newline dropped), read as every file of secrets
    is (docs/security.md, "Files of secrets"): a regular file of this user or root, owner-only."""
    data = read_secret_file(CLIENT_CREDENTIALS_FILE_ENV, path, CREDENTIALS_FILE_MAX)
    return data[:-1] if data.endswith(b"\n") else data


def credentials_from_environment() -> bytes:
    """The client's credentials from ``AERON_ARCHIVE_CLIENT_CREDENTIALS`` or the file named by
    ``AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE``; empty when neither is set."""
    value = os.environ.get(CLIENT_CREDENTIALS_ENV)
    if value:
        return value.encode()
    path = os.environ.get(CLIENT_CREDENTIALS_FILE_ENV)
    if path:
        return read_credentials_file(path)
    return b""


def resolve_credentials(credentials: bytes | CredentialsSupplier | None,
                        on_challenge: Callable[[bytes], bytes] | None) -> tuple[bytes, Callable[[bytes], bytes] | None]:
    """The bytes a connect sends and its challenge handler, from a connect's arguments: bytes as
    they are, a CredentialsSupplier's, or (None) the environment's."""
    if credentials is None:
        return credentials_from_environment(), on_challenge
    if isinstance(credentials, CredentialsSupplier):
        handler = on_challenge
        if handler is None and credentials.answers_challenges():
            handler = credentials.on_challenge
        return credentials.encoded_credentials(), handler
    if not isinstance(credentials, bytes | bytearray):
        raise TypeError(f"credentials must be bytes (e.g. b'principal:secret') or a CredentialsSupplier, got "
                        f"{type(credentials).__name__}")
    return bytes(credentials), on_challenge
