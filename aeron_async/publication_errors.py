"""Publication errors (Aeron 1.48, reference aeron-wave3.md 4.2): what a publisher's client hears
when a receiver rejects one of its images (`Image.reject`), handed to `Aeron.on_publication_error`
by `Aeron.poll_publication_errors`."""

from __future__ import annotations

from typing import Any

from ._ffi import ffi

__all__ = ("PublicationErrorFrame",)


class PublicationErrorFrame:
    """A receiver's rejection of a publication's image (Aeron's PublicationErrorFrame): the
    publication (`registration_id`), its session and stream, the receiver (`receiver_id`, -1 for IPC),
    its group tag (-1: none), where it came from (`source_address` "host:port"; IPC: 127.0.0.1:0), the
    error code (13, IMAGE_REJECTED) and the reason given to `Image.reject` (`error_message`)."""

    __slots__ = ("registration_id", "destination_registration_id", "session_id", "stream_id", "receiver_id",
                 "group_tag", "source_address", "error_code", "error_message")

    def __init__(self, registration_id: int, destination_registration_id: int, session_id: int, stream_id: int,
                 receiver_id: int, group_tag: int, source_address: str, error_code: int, error_message: str) -> None:
        self.registration_id = registration_id
        self.destination_registration_id = destination_registration_id
        self.session_id = session_id
        self.stream_id = stream_id
        self.receiver_id = receiver_id
        self.group_tag = group_tag
        self.source_address = source_address
        self.error_code = error_code
        self.error_message = error_message

    @classmethod
    def _from_native(cls, info: Any) -> PublicationErrorFrame:
        host = ffi.string(info.source_address).decode()
        return cls(info.registration_id, info.destination_registration_id, info.session_id, info.stream_id,
                   info.receiver_id, info.group_tag, f"[{host}]:{info.source_port}" if ":" in host
                   else f"{host}:{info.source_port}", info.error_code,
                   ffi.string(info.error_text).decode("utf-8", "replace"))

    def __repr__(self) -> str:
        return (f"<PublicationErrorFrame registration_id={self.registration_id} session={self.session_id} "
                f"stream={self.stream_id} from={self.source_address} code={self.error_code} "
                f"message={self.error_message!r}>")
