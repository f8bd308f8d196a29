"""responses.py under mutation (D-TEST-13, bench/mutation.py): what a response that is not
an answer keeps, and which responses are answers of their binding at all (PROFILE §7:
three that are not, in a row, abandon an interface). Bodies written here by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_interview.checks import Binding, Exchange, is_binding_answer, read_result

JSONRPC, HTTP_JSON = Binding.JSONRPC, Binding.HTTP_JSON


def _exchange(body: Any, status: int = 200) -> Exchange:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Exchange(status, (("content-type", "application/json"),), raw)


def test_a_result_that_is_no_answer_keeps_its_value_status_and_the_models_words() -> None:
    # interview §5 / PROFILE §4.1: neither exactly an answer nor the refusal is
    # wire_format, with the model's fixed message; the value is kept as `got`.
    value = {"question": "identity"}
    read = read_result(_exchange({"jsonrpc": "2.0", "id": 7, "result": value}), JSONRPC, 7)
    assert read.problem == (
        "wire_format",
        "an answer does not have exactly the members ['declared', 'projections', 'question']",
    )
    assert read.value == value
    assert read.status == 200
    assert read.summary() == value
    assert read.canonical == b'{"question":"identity"}'
    assert read_result(_exchange([1]), HTTP_JSON, None).problem == (
        "wire_format", "an answer is not an object")  # fmt: skip


def _answer_of(binding: Binding, body: Any, status: int = 200) -> bool:
    exchange = _exchange(body, status)
    return is_binding_answer(exchange, binding, read_result(exchange, binding, 1))


ERROR = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}


@pytest.mark.parametrize(
    ("binding", "body", "status", "answer"),
    [
        # JSON-RPC: any JSON-RPC 2.0 response object, whatever the status or what it says
        (JSONRPC, {"jsonrpc": "2.0", "id": 1, "result": {"question": "identity"}}, 200, True),
        (JSONRPC, {"jsonrpc": "2.0", "id": 1, "result": "x"}, 200, True),  # wire_format
        (JSONRPC, ERROR, 200, True),  # error_response
        (JSONRPC, ERROR, 500, True),  # http_status, still a JSON-RPC response
        (JSONRPC, {"jsonrpc": "2.0", "id": 2, "result": 1}, 200, True),  # another id
        (JSONRPC, {"jsonrpc": "1.0", "id": 1, "result": 1}, 200, False),
        (JSONRPC, {"id": 1, "result": 1}, 500, False),
        (JSONRPC, [ERROR], 200, False),  # a batch is no response object
        (JSONRPC, b"<html>Not Found</html>", 404, False),
        (JSONRPC, b"", 200, False),
        # HTTP+JSON: any JSON body
        (HTTP_JSON, {"question": "identity"}, 200, True),  # wire_format
        (HTTP_JSON, {"error": "not found"}, 404, True),
        (HTTP_JSON, [1], 500, True),
        (HTTP_JSON, b"<html>Not Found</html>", 404, False),
        (HTTP_JSON, b"{", 200, False),
    ],
)
def test_an_answer_of_the_binding_is_any_response_of_its_shape(
    binding: Binding, body: Any, status: int, answer: bool
) -> None:
    assert _answer_of(binding, body, status) is answer


def test_a_well_formed_answer_is_an_answer_of_either_binding() -> None:
    from support.checks import answer

    body = answer("identity")
    assert _answer_of(HTTP_JSON, body)
    assert _answer_of(JSONRPC, {"jsonrpc": "2.0", "id": 1, "result": body})
