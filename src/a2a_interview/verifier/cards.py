"""The card: fetched for what the user named, and its variants (PROFILE §7).

Each interface is judged against the card as served under its own ``A2A-Version``
(:func:`~.calls.version_for`), fetched once per run; the default card (no version sent)
for 0.3, and when the variant cannot be read (an advisory). A variant whose bytes differ
is checked as the card is (its signature, its terms entries); one that differs in more
than its signatures is an advisory, never a conflict.
"""

from __future__ import annotations

from ..checks import Advisory, Interface
from ..declarations import read_card
from ..errors import DeclarationError, IngressError
from ..jcs import canonicalize, digest
from ..net.failures import without_credentials
from ..net.urls import card_url_for
from ..record import Incomplete
from ..spec import VERSION_HEADER
from ..strictjson import JSONObject
from .calls import version_for
from .client import Interviewer
from .proposals import verify_terms
from .signatures import card_signature
from .state import RunState, Stop, Variant, VerifyOptions, auth_required, off_loop, progress

__all__ = ["card_variant", "fetch_card"]


async def fetch_card(
    session: Interviewer, options: VerifyOptions, url: str, state: RunState
) -> tuple[JSONObject, str, str]:
    """The card for what the user named (``url``, its base URL or card URL), read
    strictly: the card, its digest, and the URL it was served at (redirects followed,
    kept in ``state.card_url`` as they are). A 401/403, a status other than 200 or a
    card that is not a strict I-JSON object ends the run (:class:`~.state.Stop`)."""
    card_url = card_url_for(url)
    state.card_url = card_url
    response = await session.get(card_url, (("Accept", "application/json"),))
    state.card_url = response.url
    if response.status in (401, 403):
        sent = session.sends_credentials(response.url)
        raise auth_required(None, options.client, response.url, sent=sent)
    if response.status != 200:
        raise Stop(
            Incomplete(
                "card_status",
                "the card URL did not answer 200",
                url=without_credentials(response.url),
            )
        )
    try:
        card = await off_loop(read_card, response.body, max_bytes=options.client.max_bytes)
    except (IngressError, DeclarationError) as exc:
        raise Stop(
            Incomplete("card_unreadable", f"the card is not a strict I-JSON object ({exc.code})")
        ) from None
    return card, await off_loop(digest, card), response.url


async def card_variant(
    session: Interviewer, options: VerifyOptions, interface: Interface, state: RunState
) -> Variant:
    """The card variant ``interface`` is judged against (PROFILE §7): the card as
    served under the interface's ``A2A-Version``, fetched once per run; the default
    card for 0.3, and when the variant cannot be read (an advisory)."""
    version = version_for(interface)
    default = state.variants[""]
    if version is None:
        return default
    if version in state.variants:
        return state.variants[version]
    progress(options, f"card {version}")
    assert state.card_url is not None
    headers = (("Accept", "application/json"), (VERSION_HEADER, version))
    response = await session.get(state.card_url, headers)
    if response.status in (401, 403):
        sent = session.sends_credentials(response.url)
        raise auth_required(default.card, options.client, response.url, sent=sent)
    card: JSONObject | None = None
    if response.status == 200:
        try:
            card = await off_loop(read_card, response.body, max_bytes=options.client.max_bytes)
        except (IngressError, DeclarationError):
            card = None
    if card is None:
        state.advisories.append(
            Advisory(
                "card_variants",
                "variant_unreadable",
                value=version,
                detail="the card asked for with this A2A-Version did not answer 200 "
                "with a strict I-JSON object; its interfaces were judged against "
                "the default card",
            )
        )
        state.variants[version] = default
        return default
    card_digest = await off_loop(digest, card)
    if card_digest == default.digest:
        state.variants[version] = default
        return default
    signature = await card_signature(session, options, card, response.url, state)
    if signature is not None:
        state.variant_signatures[version] = signature
    declared = await verify_terms(session, options, card, state, primary=False)
    if declared is None:
        state.variants[version] = default
        return default
    if _without_signatures(card) != _without_signatures(default.card):
        # PROFILE §7: variants that differ in more than their signatures are an
        # advisory, never a conflict.
        state.advisories.append(
            Advisory(
                "card_variants",
                "variants_differ",
                value={"version": version, "card_digest": card_digest},
                detail="the card served under this A2A-Version differs from the "
                "default card in more than its signatures; the answers on its "
                "interfaces were diffed against it",
            )
        )
    variant = Variant(version, card, card_digest, declared)
    state.variants[version] = variant
    return variant


def _without_signatures(card: JSONObject) -> bytes:
    return canonicalize({k: v for k, v in card.items() if k != "signatures"})
