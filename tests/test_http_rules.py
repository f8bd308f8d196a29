"""Every rule of PROFILE §3 and §3b, over real HTTP, against the demo agent.

The demo is the Stonework reference agent as a real a2a-sdk app
(:func:`a2a_interview.server.demo.build_app`), served by uvicorn on 127.0.0.1. Expected
answers come from the card and proposals fetched from that same server, so the tests
also check that what is served and what is answered agree.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.card import verify_card
from a2a_interview.declarations import build
from a2a_interview.jcs import canonicalize
from a2a_interview.pointer import resolve
from a2a_interview.projection import Interview
from a2a_interview.server import demo
from a2a_interview.server.ratelimit import RateLimiter
from a2a_interview.spec import INTERVIEW_URI, QUESTIONS
from a2a_interview.strictjson import loads
from a2a_interview.terms import read_terms_entries, verify_proposal
from support.servers import serve

ACT = {"A2A-Extensions": INTERVIEW_URI}
LEGACY = {"X-A2A-Extensions": INTERVIEW_URI}
OMIT: Any = object()
SKILLS = ["reconcile-statement", "flag-exceptions", "r\u00e4kna-moms"]
# PROFILE §5, spelled out by hand (not computed by the code under test).
REFUSAL = (
    '{"declared_skills":["reconcile-statement","flag-exceptions","r\u00e4kna-moms"],'
    '"detail":"no declared skill matches","reason":"out_of_scope","refused":true}'
).encode()
INVALID_PARAMS = b'{"error":{"code":-32602,"message":"Invalid params"},"id":7,"jsonrpc":"2.0"}'


@dataclass
class Agent:
    origin: str
    http: httpx.Client
    card: dict[str, Any]
    interview: Interview
    rpc_path: str
    rest_path: str

    def call(
        self,
        method: str,
        params: Any = OMIT,
        *,
        request_id: Any = 7,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        path: str | None = None,
    ) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not OMIT:
            body["params"] = params
        return self.post(json.dumps(body, ensure_ascii=False).encode(), headers=headers, path=path)

    def post(self, body: bytes, *, headers: Any = None, path: str | None = None) -> httpx.Response:
        base = [("Content-Type", "application/json"), ("A2A-Version", "1.0")]
        extra = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        return self.http.post(path or self.rpc_path, content=body, headers=base + extra)

    def get(self, question: str, query: str = "", headers: Any = None) -> httpx.Response:
        url = f"{self.rest_path}/interview/{question}" + (f"?{query}" if query else "")
        extra = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        return self.http.get(url, headers=[("A2A-Version", "1.0"), *extra])


def result_bytes(response: httpx.Response, request_id: Any = 7) -> bytes:
    """The exact bytes of the JSON-RPC ``result`` member, read off the wire."""
    prefix = b'{"id":' + canonicalize(request_id) + b',"jsonrpc":"2.0","result":'
    body = response.content
    assert body.startswith(prefix) and body.endswith(b"}"), body[:120]
    return body[len(prefix) : -1]


def echo(response: httpx.Response) -> list[tuple[str, str]]:
    return [(k, v) for k, v in response.headers.multi_items() if "a2a-extensions" in k]


def _agent(origin: str, http: httpx.Client) -> Agent:
    card = loads(http.get("/.well-known/agent-card.json").content)
    assert isinstance(card, dict)
    fetched = {e.url: http.get(e.url).content for e in read_terms_entries(card) if e.url}
    interfaces = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    return Agent(
        origin,
        http,
        card,
        build(card, fetched).interview,
        urlsplit(interfaces["JSONRPC"]).path,
        urlsplit(interfaces["HTTP+JSON"]).path,
    )


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    with serve(demo.build_app) as origin, httpx.Client(base_url=origin, timeout=10) as http:
        yield _agent(origin, http)


# --- The demo itself (D-SERVE-6) -------------------------------------------------


def test_demo_card_is_signed_over_the_card_as_served(agent: Agent) -> None:
    # PROFILE §6.3, §6.4: signed with the test key, verifiable under `served` with the JWKS
    # fetched from the same-origin jku.
    [item] = agent.card["signatures"]
    check = verify_card(agent.card, [], readings=("served",))
    assert check.status == "key_unavailable"  # no key, no verification: the check can fail
    jku = check.checks[0].jku
    assert jku == agent.origin + reference.JWKS_PATH
    jwks = agent.http.get(jku)
    assert jwks.status_code == 200
    report = verify_card(agent.card, jwks.json()["keys"], readings=("served",))
    assert report.status == "verified" and report.kid == reference.CARD_KID
    assert report.checks[0].uncovered == ()
    tampered = {**agent.card, "name": "Stonework!"}
    assert verify_card(tampered, jwks.json()["keys"]).status == "invalid"
    assert item["protected"] and item["signature"]


def test_demo_card_names_its_own_origin(agent: Agent) -> None:
    # D-SERVE-6: the card is built for the port actually bound.
    urls = [i["url"] for i in agent.card["supportedInterfaces"]]
    assert urls == [agent.origin + "/a2a/jsonrpc", agent.origin + "/a2a/rest"]
    unsigned = {k: v for k, v in agent.card.items() if k != "signatures"}
    assert unsigned == reference.unsigned_card(agent.origin)


def test_demo_serves_the_committed_proposals_on_its_origin(agent: Agent) -> None:
    # PROFILE §2.3: each committed proposal is fetched from the url the card names.
    entries = read_terms_entries(agent.card)
    assert len(entries) == 2
    for entry in entries:
        assert entry.url is not None and entry.url.startswith(agent.origin + "/terms/")
        verdict = verify_proposal(entry.digest, agent.http.get(entry.url).content)
        assert verdict.ok, verdict.result
    assert agent.http.get("/terms/nothing.sow.json").status_code == 404


def test_demo_answers_ordinary_traffic(agent: Agent) -> None:
    # D-SERVE-6: a real a2a-sdk agent with a trivial executor.
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    reply = agent.call("SendMessage", {"message": message}).json()
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "Stonework demo: hello"}]


# --- PROFILE §3.1: the five methods at the agent's JSON-RPC url ------------------------


@pytest.mark.parametrize("question", QUESTIONS)
def test_five_methods_answered_at_the_jsonrpc_url(agent: Agent, question: str) -> None:
    # PROFILE §3.1, §3.6: the result is the answer, in JCS form.
    response = agent.call(f"interview/{question}", headers=ACT)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    result = result_bytes(response)
    assert result == agent.interview.answer(question)
    assert result == canonicalize(loads(result))
    assert loads(result)["question"] == question


def test_card_projections_resolve_against_the_card_as_served(agent: Agent) -> None:
    # PROFILE §2.1, §4.2: every card source resolves to its value in the served card.
    for question in QUESTIONS:
        answer = loads(result_bytes(agent.call(f"interview/{question}", headers=ACT)))
        for projection in answer["projections"]:
            source = projection["source"]
            if source["document"] == "card":
                got = canonicalize(projection["value"])
                assert got == canonicalize(resolve(agent.card, source["member"]))
    identity = loads(result_bytes(agent.call("interview/identity", headers=ACT)))
    members = [p["source"]["member"] for p in identity["projections"]]
    assert "/signatures" in members  # the signature is part of the identity answer


# --- PROFILE §3.2: activation and the echo -------------------------------------------


def test_activation_by_a2a_extensions_echoes_it(agent: Agent) -> None:
    # PROFILE §3.2
    response = agent.call("interview/identity", headers=ACT)
    assert response.status_code == 200
    assert echo(response) == [("a2a-extensions", INTERVIEW_URI)]


def test_activation_by_legacy_header_echoes_both_names(agent: Agent) -> None:
    # PROFILE §3.2: the 0.3 spelling activates too and gets the echo under both names.
    response = agent.call("interview/identity", headers=LEGACY)
    assert result_bytes(response) == agent.interview.answer("identity")
    assert sorted(echo(response)) == [
        ("a2a-extensions", INTERVIEW_URI),
        ("x-a2a-extensions", INTERVIEW_URI),
    ]


@pytest.mark.parametrize(
    "value",
    [
        f"https://example.com/other/v1,{INTERVIEW_URI}",
        f", https://example.com/other/v1 ,\t{INTERVIEW_URI}\t,",
        f"https://example.com/other/v1,  {INTERVIEW_URI}  ,  ,x",
        f",,{INTERVIEW_URI},,",
        f"{INTERVIEW_URI} ,https://agentsow.com/extensions/a2a-terms/v1",
    ],
)
def test_activation_reads_a_comma_list_with_blanks(agent: Agent, value: str) -> None:
    # PROFILE §3.2: each element is trimmed of blanks and compared exactly.
    response = agent.call("interview/capabilities", headers={"A2A-Extensions": value})
    assert result_bytes(response) == agent.interview.answer("capabilities")
    assert echo(response) == [("a2a-extensions", INTERVIEW_URI)]


def test_activation_from_any_of_several_header_lines(agent: Agent) -> None:
    # PROFILE §3.2: repeated header lines form one list (RFC 9110 §5.3).
    headers = [
        ("A2A-Extensions", "https://example.com/other/v1"),
        ("A2A-Extensions", INTERVIEW_URI),
    ]
    response = agent.call("interview/capabilities", headers=headers)
    assert result_bytes(response) == agent.interview.answer("capabilities")


def test_every_activated_response_carries_the_echo(agent: Agent) -> None:
    # PROFILE §3.2: answers, refusals and -32602 errors alike.
    for method, params in [
        ("interview/usage", {"skill": "flag-exceptions"}),
        ("interview/usage", {"skill": "nope"}),
        ("interview/bogus", OMIT),
        ("interview/identity", [1]),
    ]:
        response = agent.call(method, params, headers=ACT)
        assert echo(response) == [("a2a-extensions", INTERVIEW_URI)], method
    for question, query in [
        ("identity", ""),
        ("usage", "skill=nope"),
        ("bogus", ""),
        ("usage", "x=1"),
    ]:
        response = agent.get(question, query, headers=ACT)
        assert echo(response) == [("a2a-extensions", INTERVIEW_URI)], question


NOT_EXACT = [
    INTERVIEW_URI.upper(),
    INTERVIEW_URI.replace("agentsow", "AgentSoW"),
    INTERVIEW_URI + "/",
    INTERVIEW_URI + ";v=1",
    INTERVIEW_URI + "?x=1",
    INTERVIEW_URI.replace("https://", "http://"),
    INTERVIEW_URI[:-1] + "2",
    f'"{INTERVIEW_URI}"',
    INTERVIEW_URI.replace("/v1", " /v1"),
]


@pytest.mark.parametrize("value", NOT_EXACT)
@pytest.mark.parametrize("name", ["A2A-Extensions", "X-A2A-Extensions"])
def test_activation_is_an_exact_match(agent: Agent, name: str, value: str) -> None:
    # PROFILE §3.2: no case folding, no trailing-slash or parameter tolerance. Without
    # activation the method does not exist (PROFILE §3.3).
    response = agent.call("interview/identity", headers={name: value})
    unknown = agent.call("no/such-method", headers={name: value})
    assert response.json()["error"]["code"] == -32601
    assert response.content == unknown.content
    assert echo(response) == []


def test_wrong_header_name_does_not_activate(agent: Agent) -> None:
    # PROFILE §3.2: only A2A-Extensions and X-A2A-Extensions are read.
    for name in ("A2A-Extension", "Extensions", "X-A2A-Extension", "A2A-Extensions-X"):
        response = agent.call("interview/identity", headers={name: INTERVIEW_URI})
        assert response.json()["error"]["code"] == -32601, name


# --- PROFILE §3.3: not activated ------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [None, {"A2A-Extensions": "https://example.com/other/v1"}, {"A2A-Extensions": ""}],
)
@pytest.mark.parametrize("question", [*QUESTIONS, "bogus"])
def test_without_activation_the_sdk_answers_method_not_found(
    agent: Agent, headers: Any, question: str
) -> None:
    # PROFILE §3.3: exactly what the agent gives any unknown method, byte for byte
    # and header for header; nothing reveals the interview.
    response = agent.call(f"interview/{question}", {"skill": "x"}, headers=headers)
    unknown = agent.call("tasks/nonexistent", {"skill": "x"}, headers=headers)
    assert response.status_code == unknown.status_code == 200
    assert response.content == unknown.content
    assert (
        response.content
        == b'{"error":{"code":-32601,"message":"Method not found"},"id":7,"jsonrpc":"2.0"}'
    )
    strip = {"date", "server"}
    assert [h for h in response.headers.multi_items() if h[0] not in strip] == [
        h for h in unknown.headers.multi_items() if h[0] not in strip
    ]
    assert b"interview" not in response.content


def test_without_activation_the_answer_matches_a_plain_sdk_agent() -> None:
    # PROFILE §3.3: compared with the same agent without the interview layer at all.
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette

    from a2a_interview.server.sdk import agent_card_from_json

    def plain(origin: str) -> Starlette:
        card = agent_card_from_json(reference.unsigned_card(origin))
        handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
        return Starlette(routes=create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc"))

    body = b'{"jsonrpc":"2.0","id":"q","method":"interview/identity"}'
    headers = {"Content-Type": "application/json"}
    with serve(plain) as a, serve(demo.build_app) as b:
        bare = httpx.post(a + "/a2a/jsonrpc", content=body, headers=headers)
        ours = httpx.post(b + "/a2a/jsonrpc", content=body, headers=headers)
    assert bare.content == ours.content
    assert bare.headers["content-type"] == ours.headers["content-type"]
    assert "a2a-extensions" not in ours.headers


# --- PROFILE §3.4: closure -------------------------------------------------------------


@pytest.mark.parametrize(
    "method",
    [
        "interview/bogus",
        "interview/",
        "interview/Identity",
        "interview/identity/",
        "interview/terms ",
    ],
)
def test_closure_refusal_for_undefined_methods(agent: Agent, method: str) -> None:
    # PROFILE §3.4, §5: the standard refusal, exact bytes, as the result.
    response = agent.call(method, headers=ACT)
    assert response.status_code == 200
    assert result_bytes(response) == REFUSAL == agent.interview.refusal
    assert echo(response) == [("a2a-extensions", INTERVIEW_URI)]


def test_methods_outside_the_namespace_pass_to_the_host(agent: Agent) -> None:
    # PROFILE §3.4: the host answers them untouched, activation or not.
    for method in ("interviewidentity", "Interview/identity", "tasks/get"):
        activated = agent.call(method, headers=ACT)
        plain = agent.call(method)
        assert activated.content == plain.content
        assert activated.json()["error"]["code"] == -32601
        assert echo(activated) == []
    missing = agent.call("GetTask", {"id": "no-such-task"}, headers=ACT)
    assert missing.json()["error"]["code"] == -32001  # the SDK's TaskNotFound
    assert echo(missing) == []


# --- PROFILE §3.5: params ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("interview/identity", [1, 2]),
        ("interview/usage", []),
        ("interview/usage", ["flag-exceptions"]),
        ("interview/identity", None),
        ("interview/terms", None),
        ("interview/usage", "skill"),
        ("interview/usage", 1),
        ("interview/usage", {"skill": "flag-exceptions", "extra": 1}),
        ("interview/usage", {"Skill": "flag-exceptions"}),
        ("interview/refusals", {"nonce": "n-1"}),
        ("interview/usage", {"skill": 1}),
        ("interview/usage", {"skill": None}),
        ("interview/terms", {"skill": ["flag-exceptions"]}),
        ("interview/terms", {"skill": {"id": "flag-exceptions"}}),
        ("interview/usage", {"skill": True}),
        ("interview/identity", {"skill": "flag-exceptions"}),
        ("interview/capabilities", {"skill": "flag-exceptions"}),
        ("interview/refusals", {"skill": "flag-exceptions"}),
    ],
)
def test_invalid_params(agent: Agent, method: str, params: Any) -> None:
    # PROFILE §3.5: -32602 with a fixed message.
    response = agent.call(method, params, headers=ACT)
    assert response.status_code == 200
    assert response.content == INVALID_PARAMS
    assert echo(response) == [("a2a-extensions", INTERVIEW_URI)]


def test_invalid_params_never_carry_request_content(agent: Agent) -> None:
    # PROFILE §3.5: no error message ever contains request content.
    marker = "MARKER-\u2603-<script>"
    for params in ({marker: 1}, {"skill": [marker]}, [marker], {"skill": marker, "x": marker}):
        response = agent.call("interview/usage", params, headers=ACT)
        assert response.content == INVALID_PARAMS
        assert marker.encode() not in response.content


def test_params_omitted_or_empty_object(agent: Agent) -> None:
    # PROFILE §3.5: omitted params read as {}; both answer.
    for question in QUESTIONS:
        omitted = agent.call(f"interview/{question}", headers=ACT)
        empty = agent.call(f"interview/{question}", {}, headers=ACT)
        assert result_bytes(omitted) == result_bytes(empty) == agent.interview.answer(question)


# --- PROFILE §4.4: the skill selector ------------------------------------------------------


@pytest.mark.parametrize("question", ["usage", "terms"])
@pytest.mark.parametrize("skill", SKILLS)
def test_selector_matches_a_declared_skill(agent: Agent, question: str, skill: str) -> None:
    # PROFILE §4.4: an exact match selects that skill.
    response = agent.call(f"interview/{question}", {"skill": skill}, headers=ACT)
    result = result_bytes(response)
    assert result == agent.interview.answer(question, skill)
    assert result != REFUSAL


def test_selected_usage_projects_only_that_skill(agent: Agent) -> None:
    # PROFILE §4.3: for a selected skill, only its members.
    answer = loads(result_bytes(agent.call("interview/usage", {"skill": "r\u00e4kna-moms"},
                                           headers=ACT)))  # fmt: skip
    skills = {p["source"]["member"].split("/")[2] for p in answer["projections"]
              if p["source"]["member"].startswith("/skills/")}  # fmt: skip
    assert skills == {"2"}


@pytest.mark.parametrize("question", ["usage", "terms"])
@pytest.mark.parametrize(
    "skill",
    [
        unicodedata.normalize("NFD", "r\u00e4kna-moms"),  # another spelling, another selector
        "R\u00e4kna-moms",
        "flag-exceptions ",
        " flag-exceptions",
        "FLAG-EXCEPTIONS",
        "flag\u2010exceptions",
        "",
        "flag-exceptions\u0000",
        "*",
    ],
)
def test_selector_without_a_match_gets_the_refusal(agent: Agent, question: str, skill: str) -> None:
    # PROFILE §4.4: code point for code point; no normalization, trimming or case folding.
    response = agent.call(f"interview/{question}", {"skill": skill}, headers=ACT)
    assert result_bytes(response) == REFUSAL


def test_nfc_and_nfd_spellings_are_different_selectors(agent: Agent) -> None:
    # PROFILE §4.4: the NFC spelling is the declared id; the NFD spelling is not.
    nfc = "r\u00e4kna-moms"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd and unicodedata.normalize("NFC", nfd) == nfc
    hit = agent.call("interview/usage", {"skill": nfc}, headers=ACT)
    miss = agent.call("interview/usage", {"skill": nfd}, headers=ACT)
    assert result_bytes(hit) == agent.interview.answer("usage", nfc) != REFUSAL
    assert result_bytes(miss) == REFUSAL
    rest_hit = agent.get("usage", "skill=" + quote(nfc), headers=ACT)
    rest_miss = agent.get("usage", "skill=" + quote(nfd), headers=ACT)
    assert rest_hit.content == result_bytes(hit)
    assert rest_miss.content == REFUSAL


def test_terms_for_a_skill_with_no_committed_proposal(agent: Agent) -> None:
    # PROFILE §4.1, §4.4: no proposal for the selection is an answer, declared false.
    response = agent.call("interview/terms", {"skill": "r\u00e4kna-moms"}, headers=ACT)
    assert result_bytes(response) == b'{"declared":false,"projections":[],"question":"terms"}'


# --- PROFILE §3.6: result bytes --------------------------------------------------------------


def test_results_are_jcs_and_deterministic(agent: Agent) -> None:
    # PROFILE §3.6: the result in JCS form; two interviews give identical bytes.
    calls = [(f"interview/{q}", OMIT) for q in QUESTIONS]
    calls += [(f"interview/{q}", {"skill": s}) for q in ("usage", "terms") for s in SKILLS]
    first = [result_bytes(agent.call(m, p, headers=ACT)) for m, p in calls]
    second = [result_bytes(agent.call(m, p, headers=ACT)) for m, p in calls]
    assert first == second
    for result in first:
        assert result == canonicalize(loads(result))
    # RFC 8785: non-ASCII is sent as UTF-8, never as a \u escape.
    assert "r\u00e4kna-moms".encode() in first[1]
    assert b"\\u00e4" not in first[1]


def test_the_request_id_is_returned_as_given(agent: Agent) -> None:
    # PROFILE §3.6: the envelope carries the request's id; the result is unchanged.
    for request_id in ("abc", 0, -5, 2**53 - 1, None, "\u00e4"):
        response = agent.call("interview/identity", request_id=request_id, headers=ACT)
        assert result_bytes(response, request_id) == agent.interview.answer("identity")


# --- PROFILE §3b: HTTP+JSON ---------------------------------------------------------------------


@pytest.mark.parametrize("question", QUESTIONS)
def test_rest_body_is_the_jsonrpc_result(agent: Agent, question: str) -> None:
    # PROFILE §3b: same JCS bytes as the JSON-RPC result, Content-Type application/json.
    response = agent.get(question, headers=ACT)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == result_bytes(agent.call(f"interview/{question}", headers=ACT))
    assert echo(response) == [("a2a-extensions", INTERVIEW_URI)]


@pytest.mark.parametrize("skill", SKILLS)
def test_rest_selector(agent: Agent, skill: str) -> None:
    # PROFILE §3b: the optional query `skill`.
    for question in ("usage", "terms"):
        response = agent.get(question, "skill=" + quote(skill), headers=ACT)
        rpc = agent.call(f"interview/{question}", {"skill": skill}, headers=ACT)
        assert response.content == result_bytes(rpc) == agent.interview.answer(question, skill)


def test_rest_legacy_header_echoes_both_names(agent: Agent) -> None:
    # PROFILE §3b, §3.2
    response = agent.get("identity", headers=LEGACY)
    assert response.status_code == 200
    assert sorted(echo(response)) == [
        ("a2a-extensions", INTERVIEW_URI),
        ("x-a2a-extensions", INTERVIEW_URI),
    ]


@pytest.mark.parametrize("question", [*QUESTIONS, "bogus"])
@pytest.mark.parametrize("headers", [None, {"A2A-Extensions": INTERVIEW_URI + "/"}])
def test_rest_not_activated_is_the_hosts_404(agent: Agent, question: str, headers: Any) -> None:
    # PROFILE §3b: not activated, the host's own 404 for unknown routes.
    response = agent.get(question, headers=headers)
    unknown = agent.http.get(f"{agent.rest_path}/no-such-route/{question}", headers=headers)
    assert response.status_code == unknown.status_code == 404
    assert response.content == unknown.content
    assert response.headers["content-type"] == unknown.headers["content-type"]
    assert echo(response) == []


# (`identity%20` is `identity` to a host that drops trailing blanks: PROFILE §3.9.)
@pytest.mark.parametrize("question", ["bogus", "Identity", "iden%20tity", "%C3%A4"])
def test_rest_unknown_question_is_a_200_refusal(agent: Agent, question: str) -> None:
    # PROFILE §3b: activated, {question} not one of the five: 200 with the standard refusal.
    response = agent.get(question, headers=ACT)
    assert response.status_code == 200
    assert response.content == REFUSAL
    assert response.headers["content-type"] == "application/json"


def test_rest_unknown_skill_is_a_200_refusal(agent: Agent) -> None:
    # PROFILE §4.4 on the HTTP+JSON binding.
    response = agent.get("usage", "skill=nope", headers=ACT)
    assert (response.status_code, response.content) == (200, REFUSAL)


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("identity", "nonce=1"),
        ("usage", "skill=flag-exceptions&nonce=1"),
        ("usage", "Skill=flag-exceptions"),
        ("usage", "skill=flag-exceptions&skill=flag-exceptions"),
        ("terms", "skill=a&skill=b"),
        ("identity", "skill=flag-exceptions"),
        ("refusals", "skill=flag-exceptions"),
    ],
)
def test_rest_bad_query_is_400(agent: Agent, question: str, query: str) -> None:
    # PROFILE §3b: unknown query parameters or a repeated skill: 400.
    response = agent.get(question, query, headers=ACT)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert echo(response) == [("a2a-extensions", INTERVIEW_URI)]
    assert b"nonce" not in response.content and b"flag" not in response.content


def test_rest_other_methods_are_the_hosts(agent: Agent) -> None:
    # PROFILE §3b: only GET is the interview's; anything else is the host's.
    url = f"{agent.rest_path}/interview/identity"
    with_activation = agent.http.post(url, headers=ACT)
    without = agent.http.post(url)
    assert with_activation.status_code == without.status_code
    assert with_activation.content == without.content
    assert echo(with_activation) == []


# --- PROFILE §3.7: rate limit ------------------------------------------------------------


def test_rate_limit_per_client() -> None:
    # PROFILE §3.7: over the limit, 429 + Retry-After + -32000; per client (remote address);
    # ordinary traffic is not counted.
    limiter = RateLimiter("3/minute")

    def app(origin: str) -> Any:
        return demo.build_app(origin, limiter=limiter)

    with serve(app) as origin, httpx.Client(base_url=origin) as http:
        agent = _agent(origin, http)
        for _ in range(5):  # ordinary traffic, and calls without activation, are not counted
            assert agent.call("GetTask", {"id": "x"}, headers=ACT).status_code == 200
            assert agent.call("interview/identity").json()["error"]["code"] == -32601
        for _ in range(3):
            assert result_bytes(agent.call("interview/identity", headers=ACT))
        over = agent.call("interview/identity", request_id="r-9", headers=ACT)
        assert over.status_code == 429
        assert over.content == (
            b'{"error":{"code":-32000,"message":"Too many requests"},"id":"r-9","jsonrpc":"2.0"}'
        )
        assert 1 <= int(over.headers["retry-after"]) <= 60
        assert over.headers["a2a-extensions"] == INTERVIEW_URI
        rest = agent.get("identity", headers=ACT)
        assert rest.status_code == 429 and int(rest.headers["retry-after"]) >= 1
        # Ordinary traffic still flows for the same client.
        assert agent.call("GetTask", {"id": "x"}).json()["error"]["code"] == -32001
        # Another client (another loopback address) has its own budget.
        other = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=origin, transport=other) as second:
            fresh = second.post(
                agent.rpc_path,
                content=b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}',
                headers={**ACT, "A2A-Version": "1.0"},
            )
            assert fresh.status_code == 200
            assert result_bytes(fresh) == agent.interview.answer("identity")
