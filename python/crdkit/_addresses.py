"""Bind addresses in controller-runtime's spelling (``":8080"``, ``"127.0.0.1:0"``, ``"0"``).

Shared by the runtime's servers (metrics, probes) and the webhook room's, which sits below the
runtime and so cannot take it from there.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback", "parse_bind_address"]


def parse_bind_address(address: str, *, field: str = "bind address") -> tuple[str, int] | None:
    """``":8080"`` → ``("0.0.0.0", 8080)``, ``"127.0.0.1:0"`` → an ephemeral port, ``"0"`` → off.

    The same spelling as controller-runtime's ``--metrics-bind-address``.
    """
    if address == "0":
        return None
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit():
        raise ValueError(f"{field} must look like ':8080' or 'host:port' (or '0'), got {address!r}")
    port = int(port_text)
    if port > 65535:
        raise ValueError(f"{field} port must be at most 65535, got {port}")
    return (host.strip("[]") or "0.0.0.0", port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable only from this machine."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
