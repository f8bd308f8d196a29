"""Choosing the interfaces a run interviews (interview §8 step 3, PROFILE §7).

Of the JSON-RPC and HTTP+JSON interfaces the card declares, those that may be contacted
(HTTPS or loopback HTTP, an address that is public unless allowed: each other one is an
advisory, never contacted), then, within ``max_interfaces`` (never more than 16): every
one with ``thorough``, else one per binding, the others only in its stead
(:mod:`.sampling`, D-VERIFY-63). Asking each chosen interface is :mod:`.interviewing`.
"""

from __future__ import annotations

from ..checks import Advisory, Check, Conflict, Interface, find_interfaces
from ..models import Source
from ..net.failures import AddressRefused, InsecureURL
from ..net.urls import check_url
from ..spec import MAX_INTERFACES
from ..strictjson import JSONObject
from .client import Interviewer
from .sampling import Asked, Sampler, in_turn
from .state import RunState, bounded

__all__ = ["address_refused", "chosen_interfaces", "usable_interfaces"]


def address_refused(interface: Interface) -> Advisory:
    """The advisory of an interface not contacted: its address is not public."""
    return Advisory(
        "interface",
        "address_refused",
        source=Source("card", interface.member),
        detail="not interviewed: the address is not public",
    )


def _insecure(interface: Interface) -> Advisory:
    return Advisory(
        "interface",
        "insecure_url",
        source=Source("card", interface.member),
        detail="not interviewed: neither HTTPS nor loopback HTTP",
    )


def _no_interface(state: RunState) -> None:
    """PROFILE §7: non_conformant at once, without a re-run: nothing was asked."""
    conflict = Conflict(
        Check.declaration,
        "no_interface",
        source=Source("card", ""),
        detail="the card declares the interview but no JSONRPC or HTTP+JSON interface "
        "to ask it on (gRPC only)",
    )
    state.add([conflict])
    state.decided = frozenset({conflict.key})


def usable_interfaces(
    session: Interviewer, card: JSONObject, state: RunState
) -> list[Interface] | None:
    """The card's interfaces that may be contacted, in the card's order; ``None`` when
    it declares none the interview could be asked on (a conflict judged at once, kept in
    ``state``). Raises :class:`~.failures.AddressRefused` or
    :class:`~.failures.InsecureURL` when it declares some and none may be contacted."""
    interfaces, skipped = find_interfaces(card)
    state.advisories += skipped
    usable = []
    refused = False
    for interface in interfaces:
        try:
            check_url(interface.url)
            refuses = session.refuses(interface.url)  # raises for a URL that does not parse
        except InsecureURL:
            state.advisories.append(_insecure(interface))
            continue
        if refuses:
            refused = True  # never contacted: an open port looks like a closed one
            state.advisories.append(address_refused(interface))
            continue
        usable.append(interface)
    if not interfaces:
        _no_interface(state)
        return None
    if not usable:
        raise AddressRefused if refused else InsecureURL
    return usable


def chosen_interfaces(
    usable: list[Interface],
    sampler: Sampler,
    asked: Asked,
    max_interfaces: int | None,
    state: RunState,
) -> list[Interface]:
    """The interfaces the run goes through, in order, at most ``max_interfaces`` (never
    more than 16; what is left out an advisory): every usable one with ``thorough``,
    else each binding's drawn one first, the others only in its stead (D-VERIFY-63)."""
    limit = min(max_interfaces or MAX_INTERFACES, MAX_INTERFACES)
    if sampler.thorough:
        return bounded(usable, limit, "interfaces_not_asked", state)
    bindings = sampler.interfaces(usable, asked)
    return in_turn(bounded(bindings, limit, "interfaces_not_asked", state))[:limit]
