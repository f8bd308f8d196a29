"""The serving rogues of the conformance kit: the honest test agent (``agents.honest``)
with one mutation each, breaking one rule of the serving side (docs/conformance.md's
table). Each factory takes the origin and, for recorded verifier vectors, ``signed``
(an unsigned card can be replayed on any origin)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from a2a_interview.spec import QUESTIONS
from agents import Call, Reply, Wrap, honest, rewrite_results


def _inactive_answered(origin: str, signed: bool = True) -> Any:
    agent = honest(origin, signed=signed)

    def on_request(call: Call) -> Reply | None:
        if call.binding == "JSONRPC" and not call.activated and call.question:
            body = b'{"id":1,"jsonrpc":"2.0","result":%s}' % agent.interview.refusal
            return Reply(200, [(b"content-type", b"application/json")], body)
        return None

    return Wrap(agent, on_request=on_request)


def _no_echo(origin: str, signed: bool = True) -> Any:
    def on_reply(call: Call, reply: Reply) -> Reply:
        headers = [(n, v) for n, v in reply.headers if n.lower() != b"a2a-extensions"]
        return Reply(reply.status, headers, reply.body)

    return Wrap(honest(origin, signed=signed), on_reply=on_reply)


def _on(question: str, edit: Callable[[Any], Any]) -> Callable[..., Any]:
    """Rewrite the results of ``question`` (``*``: of every method outside the five)."""

    def factory(origin: str, signed: bool = True) -> Any:
        def rewrite(call: Call, result: Any) -> Any:
            closure = question == "*" and call.question not in QUESTIONS
            return edit(result) if call.question == question or closure else result

        return rewrite_results(honest(origin, signed=signed), rewrite)

    return factory


def _set_name(result: Any) -> Any:
    for p in result.get("projections", []):
        if p["source"]["member"] == "/name":
            p["value"] = "Stonewerk"
    return result


def _extra_member(result: Any) -> Any:
    return {**result, "note": "hello"} if "projections" in result else result


def _nowhere(result: Any) -> Any:
    if result.get("projections"):
        result["projections"][0]["source"]["member"] = "/no/such/member"
    return result


def _uncommitted(result: Any) -> Any:
    for p in result.get("projections", []):
        p["source"]["url"] = "https://elsewhere.example/terms.json"
    return result


def _hide_terms(result: Any) -> Any:
    return {"declared": False, "projections": [], "question": "terms"}


def _refuse_declared(result: Any) -> Any:
    return {"declared_skills": [], "detail": "no declared skill matches",
            "reason": "out_of_scope", "refused": True}  # fmt: skip


def _refusal_says_more(result: Any) -> Any:
    return {**result, "detail": "try asking nicely"} if result.get("refused") else result


def _selector_folds_case(origin: str, signed: bool = True) -> Any:
    agent = honest(origin, signed=signed)

    def on_reply(call: Call, reply: Reply) -> Reply:
        if call.question == "usage" and call.skill and call.binding == "JSONRPC":
            folded = {s.casefold(): s for s in agent.interview.skill_ids}
            if call.skill not in folded.values() and call.skill.casefold() in folded:
                answer = agent.interview.answer("usage", folded[call.skill.casefold()])
                return Reply(200, reply.headers, b'{"id":1,"jsonrpc":"2.0","result":%s}' % answer)
        return reply

    return Wrap(agent, on_reply=on_reply)


def _reorder_on_second_ask(origin: str, signed: bool = True) -> Any:
    """capabilities, every second ask: the projections reversed (each still true)."""

    def rewrite(call: Call, result: Any) -> Any:
        if call.question == "capabilities" and call.n % 2 == 1 and "projections" in result:
            result["projections"].reverse()
        return result

    return rewrite_results(honest(origin, signed=signed), rewrite)


def _rest_drops_version(origin: str, signed: bool = True) -> Any:
    """identity on HTTP+JSON without its /version projection (JSON-RPC unchanged)."""

    def rewrite(call: Call, result: Any) -> Any:
        if call.question == "identity" and call.binding == "HTTP+JSON" and "projections" in result:
            kept = [p for p in result["projections"] if p["source"]["member"] != "/version"]
            result["projections"] = kept
        return result

    return rewrite_results(honest(origin, signed=signed), rewrite)


FACTORIES: dict[str, Callable[..., Any]] = {
    "answers without activation": _inactive_answered,
    "no activation echo": _no_echo,
    "a wrong value": _on("identity", _set_name),
    "a member that resolves nowhere": _on("capabilities", _nowhere),
    "an uncommitted proposal url": _on("terms", _uncommitted),
    "an extra member in the answer": _on("refusals", _extra_member),
    "terms hidden": _on("terms", _hide_terms),
    "refusing a declared question": _on("usage", _refuse_declared),
    "a refusal that says more": _on("*", _refusal_says_more),  # any method not of the five
    "a selector folded for case": _selector_folds_case,
    "answers that change between asks": _reorder_on_second_ask,
    "interfaces that answer differently": _rest_drops_version,
}
