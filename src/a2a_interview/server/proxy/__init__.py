"""The interview in front of any A2A agent (PROFILE §9, §3.9).

    app, live = await build_proxy("http://10.0.0.5:8080")   # fetch, verify, or refuse
    run("http://10.0.0.5:8080", port=9000)                 # the same, served by uvicorn

The proxy in four parts, each its own module, each importing only those before it:

- the upstream: :mod:`.fetch` (one bounded read, :class:`ProxyError`) and
  :mod:`.upstream` (the card and its ``A2A-Version`` variants, fetched, verified, changed
  by ``declare`` and re-signed; refused at start when they do not verify);
- the front, :mod:`.front`: what a request is (the card, an interview call in every
  spelling of its path, or anything else), read whole before upstream is asked;
- the pass-through, :mod:`.passthrough`: everything else forwarded byte for byte and
  streamed back, with :mod:`.headers` deciding which header fields cross;
- serving, :mod:`.serving`: :class:`ProxyApp`, following the upstream card,
  :func:`build_proxy`, :func:`serve`, :func:`run`.

This package re-exports what callers use; import a part by name for anything else.
"""

from __future__ import annotations

try:
    import httpx  # noqa: F401 - every part needs it: say which extras when it is missing
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the proxy needs the 'server' and 'client' extras: "
        "pip install 'a2a-interview[server,client]'"
    ) from exc

from .fetch import DEFAULT_TIMEOUT, MAX_REDIRECTS, ProxyError
from .headers import trusted_peers
from .serving import (
    DEFAULT_POLL,
    ProxyApp,
    ProxyInfo,
    build_proxy,
    bypassing,
    describe,
    run,
    serve,
    server_config,
)
from .upstream import (
    CONNECT_TIMEOUT,
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY,
    MAX_VARIANTS,
    POOL_TIMEOUT,
    STREAM_IDLE_TIMEOUT,
    UNVERIFIED_RETRY,
    UPSTREAM_CONNECTIONS,
    ProxyOptions,
    UpstreamDeclarations,
    variant_key,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "DEFAULT_POLL",
    "DEFAULT_TIMEOUT",
    "MAX_REDIRECTS",
    "MAX_VARIANTS",
    "POOL_TIMEOUT",
    "STREAM_IDLE_TIMEOUT",
    "UNVERIFIED_RETRY",
    "UPSTREAM_CONNECTIONS",
    "ProxyApp",
    "ProxyError",
    "ProxyInfo",
    "ProxyOptions",
    "UpstreamDeclarations",
    "build_proxy",
    "bypassing",
    "describe",
    "run",
    "serve",
    "server_config",
    "trusted_peers",
    "variant_key",
]
