"""The interview's bindings as pure functions: request bytes in, a reply or ``None`` out.

``None`` means "not ours": the driver passes the request to the host untouched, so
everything outside the activated ``interview/`` namespace (and the host's own
``-32601`` for an interview method without activation, PROFILE §3.3) stays the host's.
Drivers (the ASGI layer, the ``a2a-sdk`` route wrapper, the proxy) only move bytes.

This package's facade, its one import path: a pinned ``__all__``. Its modules are
private, one per job: ``_paths`` (paths as hosts read them), ``_codings`` (the body's
content coding), ``_versions`` (protocol versions), ``_activation``, ``_envelopes`` (the
responses), ``_scan`` (the namespace scan), ``_fast`` (the usual call's fast reading) and
``_bindings`` (the two bindings).
"""

from ._activation import NOT_ACTIVATED, Activation, activation
from ._bindings import MAX_REQUEST_BYTES, REST_INVALID, REST_SEGMENT, jsonrpc, rest
from ._codings import content_codings, decoded_body, too_large
from ._envelopes import (
    JSON_CONTENT_TYPE,
    REST_TOO_MANY,
    REST_VERSION_NOT_SUPPORTED,
    Reply,
    rpc_error,
    too_many_requests,
)
from ._paths import normalize_path, path_key, path_segments
from ._scan import SCAN_SLICE, may_name_namespace
from ._versions import (
    Version,
    declared_versions,
    negotiated_versions,
    parse_version,
    requested_version,
    version_refusal,
    version_supported,
)

__all__ = [
    "JSON_CONTENT_TYPE",
    "MAX_REQUEST_BYTES",
    "NOT_ACTIVATED",
    "REST_INVALID",
    "REST_SEGMENT",
    "REST_TOO_MANY",
    "REST_VERSION_NOT_SUPPORTED",
    "SCAN_SLICE",
    "Activation",
    "Reply",
    "Version",
    "activation",
    "content_codings",
    "declared_versions",
    "decoded_body",
    "jsonrpc",
    "may_name_namespace",
    "negotiated_versions",
    "normalize_path",
    "parse_version",
    "path_key",
    "path_segments",
    "requested_version",
    "rest",
    "rpc_error",
    "too_large",
    "too_many_requests",
    "version_refusal",
    "version_supported",
]
