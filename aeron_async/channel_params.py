"""What the media driver does with each channel parameter (docs/configuration.md, "Channel
parameters"): applied, accepted for the other end of the channel, accepted and ignored as Aeron's
C driver ignores it, or refused with the reason. The one source is the native table of
`_native/src/driver/aa_channel_support.c`, which also decides, when a publication or subscription
is added, whether its channel passes; `aeron-async driver --help-channel-params [--markdown]`
prints it."""

from __future__ import annotations

import attrs

from ._ffi import ffi, lib

ROLES: tuple[str, ...] = ("aeron:ipc publication", "aeron:ipc subscription", "aeron:udp publication",
                          "aeron:udp subscription", "aeron-spy subscription")
_ROLE_HEADERS = ("ipc pub", "ipc sub", "udp pub", "udp sub", "spy sub")


@attrs.frozen
class ChannelParam:
    """One parameter: its name and meaning, what the driver does with it in each of ROLES (a word
    of `status_words`), and why it is refused where it is (None: nowhere, or the roles say it)."""

    name: str
    meaning: str
    status: tuple[str, ...]
    why: str | None


def _status_word(status: int, only_values: str) -> str:
    return {
        lib.AA_CHANNEL_PARAM_APPLIED: "applied",
        lib.AA_CHANNEL_PARAM_OTHER_END: "other end",
        lib.AA_CHANNEL_PARAM_IGNORED: "ignored (as Aeron)",
        lib.AA_CHANNEL_PARAM_ONLY_VALUES: f"only {only_values}",
        lib.AA_CHANNEL_PARAM_REFUSED: "refused",
        lib.AA_CHANNEL_PARAM_NOT_OF_MEDIA: "not of the media",
    }[status]


def channel_params() -> list[ChannelParam]:
    """Every channel parameter the driver knows, in its table's order."""
    info = ffi.new("aa_channel_param_info_t *")
    params = []
    for index in range(lib.aa_channel_params_count()):
        lib.aa_channel_param_describe(index, info)
        only = ffi.string(info.only_values).decode()
        params.append(ChannelParam(
            name=ffi.string(info.name).decode(),
            meaning=ffi.string(info.meaning).decode(),
            status=tuple(_status_word(info.status[i], only) for i in range(lib.AA_CHANNEL_PARAM_ROLES)),
            why=ffi.string(info.why_text).decode() or None,
        ))
    return params


def markdown_table() -> str:
    """The table of docs/configuration.md, "Channel parameters"."""
    lines = ["| parameter | " + " | ".join(_ROLE_HEADERS) + " | meaning | why refused, what instead |",
             "|---" * (len(_ROLE_HEADERS) + 3) + "|"]
    for p in channel_params():
        lines.append(f"| `{p.name}` | " + " | ".join(p.status) + f" | {p.meaning} | {p.why or ''} |")
    return "\n".join(lines)


def text_table() -> str:
    """The same, in columns for a terminal."""
    width = max(len(p.name) for p in channel_params())
    lines = [f"{'parameter':{width}s}  " + "  ".join(f"{h:18s}" for h in _ROLE_HEADERS)]
    for p in channel_params():
        lines.append(f"{p.name:{width}s}  " + "  ".join(f"{s:18s}" for s in p.status))
        lines.append(f"{'':{width}s}  {p.meaning}" + (f"; refused: {p.why}" if p.why else ""))
    return "\n".join(lines)
