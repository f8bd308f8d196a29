"""Content codings read one way on both sides (D-CORE-31): the serving bindings
(``rpc.decoded_body``, PROFILE §3.9) and the interviewer (``net.bodies``, PROFILE §1.4)
parse ``Content-Encoding`` and inflate with the one parser and the one bounded decoder of
``a2a_interview.codings``. Inputs and expected verdicts are written out by hand from
RFC 9110 §8.4 and RFC 1952 §2.2."""

from __future__ import annotations

import gzip
import zlib

import pytest

from a2a_interview import codings, rpc
from a2a_interview.net.bodies import decode_whole
from a2a_interview.net.failures import BodyTooLarge, EncodingRefused
from a2a_interview.spec import ACCEPTED_CODINGS

ON = rpc.Activation(current=True)
BODY = b'{"jsonrpc":"2.0","id":1,"method":"interview/who"}'


def _raw_deflate(data: bytes) -> bytes:
    z = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return z.compress(data) + z.flush()


def test_the_field_is_read_one_way() -> None:
    # RFC 9110 §8.4: fields joined in order, names case-insensitive, identity no layer.
    assert codings.codings([" GZip ,identity", "", "deflate\t"]) == ("gzip", "deflate")
    assert codings.codings(["identity", " , "]) == ()
    headers = [(b"Content-Encoding", b"x-gzip"), (b"content-encoding", b"Identity, br")]
    assert rpc.content_codings(headers) == ("x-gzip", "br")


def test_accept_encoding_is_built_from_the_accepted_codings() -> None:
    # spec.ACCEPTED_CODINGS is stated once; the 415's Accept-Encoding and the
    # interviewer's request header are built from it (x-gzip is gzip's old name).
    assert codings.ACCEPT_ENCODING == "gzip, deflate"
    assert {c.strip() for c in codings.ACCEPT_ENCODING.split(",")} | {"x-gzip"} == set(
        ACCEPTED_CODINGS
    )
    refused = rpc.decoded_body([(b"content-encoding", b"br")], BODY, ON, 1000)
    assert isinstance(refused, rpc.Reply) and refused.status == 415
    assert ("Accept-Encoding", codings.ACCEPT_ENCODING) in refused.headers


CASES = {
    # name: (Content-Encoding, body, served status or None for decoded, interviewer error)
    "gzip": ("gzip", gzip.compress(BODY), None, None),
    "x-gzip": ("x-gzip", gzip.compress(BODY), None, None),
    "two gzip members": ("gzip", gzip.compress(BODY[:9]) + gzip.compress(BODY[9:]), None, None),
    "zlib deflate": ("deflate", zlib.compress(BODY), None, None),
    "raw deflate": ("deflate", _raw_deflate(BODY), None, None),
    "bytes after deflate": ("deflate", zlib.compress(BODY) + b"x", 400, EncodingRefused),
    "garbage after gzip": ("gzip", gzip.compress(BODY) + b"junk", 400, EncodingRefused),
    "truncated gzip": ("gzip", gzip.compress(BODY)[:-5], 400, EncodingRefused),
    "corrupt": ("gzip", b"not gzip at all", 400, EncodingRefused),
    "past the bound": ("gzip", gzip.compress(b" " * 5000), 413, BodyTooLarge),
    "two layers": ("gzip, gzip", gzip.compress(gzip.compress(BODY)), 415, EncodingRefused),
    "unknown": ("br", BODY, 415, EncodingRefused),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_both_sides_decode_alike(case: str) -> None:
    header, data, status, error = CASES[case]
    served = rpc.decoded_body([(b"content-encoding", header.encode())], data, ON, 1000)
    if status is None:
        assert served == BODY
        assert decode_whole([("content-encoding", header)], data, 1000) == BODY
        return
    assert isinstance(served, rpc.Reply) and served.status == status
    with pytest.raises(error):
        decode_whole([("content-encoding", header)], data, 1000)


def test_the_decoder_holds_at_most_a_slice_past_the_bound() -> None:
    # A bomb: 64 MiB of zeros in about 64 KB; the decoder stops at the bound + 1 slice.
    bomb = gzip.compress(bytes(64 * 1024 * 1024), compresslevel=9)
    inflater = codings.Inflater("gzip")
    taken = 0
    with pytest.raises(codings.InflateTooLarge):
        for piece in inflater.feed(bomb, 100_000):
            taken += len(piece)
    assert taken <= 100_000
    with pytest.raises(codings.Undecodable):
        codings.inflate(b"", "gzip", 10)
