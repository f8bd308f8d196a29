"""Request spellings the interview layers are tried with: one identity call, the codings
a host inflates and those it cannot judge, every host's normalization of the paths, and
bodies padded past a layer's bound."""

from __future__ import annotations

import gzip
import json
import zlib

IDENTITY = b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


# One layer of gzip or deflate, any case of the name (PROFILE §3.9): what an inflating host
# (Express's body-parser, ASP.NET's request decompression) dispatches.
CODED = [
    ("gzip", gzip.compress),
    ("GZIP", gzip.compress),
    ("x-gzip", gzip.compress),
    ("Gzip ", gzip.compress),
    ("deflate", zlib.compress),
    ("DEFLATE", raw_deflate),
    ("identity, gzip", gzip.compress),
    ("gzip", lambda b: gzip.compress(b[:20]) + gzip.compress(b[20:])),  # two members
]


UNJUDGED = [
    ("br", IDENTITY, 415),
    ("zstd", IDENTITY, 415),
    ("compress", IDENTITY, 415),
    ("gzip, gzip", gzip.compress(gzip.compress(IDENTITY)), 415),
    ("gzip, deflate", zlib.compress(gzip.compress(IDENTITY)), 415),
    ("x-unknown", IDENTITY, 415),
    ("gzip", IDENTITY, 400),  # not gzip at all
    ("gzip", gzip.compress(IDENTITY)[:-6], 400),  # truncated
    ("deflate", zlib.compress(IDENTITY) + b"junk", 400),
    ("gzip", gzip.compress(b" " * (11 << 20) + IDENTITY), 413),  # past the 10 MiB bound
]


# Every normalization a common host applies (PROFILE §3.9):
# case (Express, ASP.NET), `;` parameters (Tomcat, Jetty), `\` and `%5C` (IIS), double
# encoding, full-width forms, NUL, trailing dots and blanks, on top of RFC 3986's.
RPC_VARIANTS = [
    b"/A2A/JSONRPC",
    b"/a2a/JsonRpc",
    b"/A2a/jsonRPC/",
    b"/a2a;x=1/jsonrpc",
    b"/a2a/jsonrpc;jsessionid=0",
    b"/a2a/;/jsonrpc",
    b"/a2a\\jsonrpc",
    b"/a2a%5Cjsonrpc",
    b"/a2a%5cJSONRPC",
    b"/a2a%252Fjsonrpc",
    b"/a2a%25252Fjsonrpc",
    b"/a2a/%256Asonrpc",
    "/a2a\uff0fjsonrpc".encode(),
    b"/a2a%EF%BC%8Fjsonrpc",
    "/\uff41\uff12\uff41/\uff4a\uff53\uff4f\uff4e\uff52\uff50\uff43".encode(),
    b"/a2a/jsonrpc%00",
    b"/a2a/jsonrpc%00.json",
    b"/a2a/jsonrpc.",
    b"/a2a/jsonrpc...",
    b"/a2a./jsonrpc",
    b"/a2a/jsonrpc%20",
    b"/a2a/JSONRPC%2e",
    b"/%41%32%41/%4A%53%4F%4E%52%50%43",
    b"/x/%2E%2E/A2A/jsonrpc",
    b"/a2a/x%5C..%5Cjsonrpc",
]


REST_VARIANTS = [
    b"/A2A/REST/interview/identity",
    b"/a2a/Rest/Interview/identity",
    b"/a2a;v=1/rest/interview/identity",
    b"/a2a\\rest\\interview\\identity",
    b"/a2a%5Crest%5Cinterview%5Cidentity",
    b"/a2a%252Frest/interview/identity",
    b"/a2a/rest./interview/identity",
    b"/a2a/rest/interview/identity;x",
    "/a2a/rest\uff0finterview/identity".encode(),
]


CARD_VARIANTS = [
    b"/.well-known/AGENT-card.json",
    b"/.WELL-KNOWN/agent-card.json",
    b"/.well-known/agent-card.json;x",
    b"/.well-known/agent-card.json.",
    b"/.well-known\\agent-card.json",
    b"/.well-known%252Fagent-card.json",
    b"/.well-known/agent-card.json%00",
]


PADDED = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "interview/usage",
                     "params": {"skill": "x" * 70_000}}).encode()  # fmt: skip


PADDED_BATCH = json.dumps([
    {"jsonrpc": "2.0", "id": 1, "method": "interview/usage"},
    {"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
     "params": {"message": {"messageId": "m", "role": "ROLE_USER",
                            "parts": [{"text": "y" * 70_000}]}}},
]).encode()  # fmt: skip
