"""The card's terms entries (terms §3): each committed proposal fetched once per run and
verified against its digest, the verdicts recorded, and the card's declarations built
over them (what the answers are diffed against).

A proposal kept away by 429s or an outage ends the run ``unreachable`` (PROFILE §7): as
``fetch_failed`` it would count against the agent.
"""

from __future__ import annotations

from ..checks import Advisory, Check, Conflict, Declared
from ..errors import DeclarationError
from ..models import Source
from ..record import ProposalRecord, committed_signers, proposal_keys
from ..strictjson import JSONObject
from ..terms import ProposalVerdict, TermsEntry, read_terms_entries, verify_proposal
from .client import Interviewer
from .state import RunState, VerifyOptions, off_loop

__all__ = ["verify_terms"]


async def verify_terms(
    session: Interviewer,
    options: VerifyOptions,
    card: JSONObject,
    state: RunState,
    *,
    primary: bool = True,
) -> Declared | None:
    """Each terms entry verified (terms §3), each proposal fetched once per run.
    Unless ``primary`` (a card variant), nothing is recorded twice."""
    fetched = state.documents
    pairs: list[tuple[TermsEntry, ProposalVerdict]] = []
    for entry in read_terms_entries(card):
        body = None
        if entry.url is not None:
            if entry.url not in fetched:
                # PROFILE §7: a 429 beyond the wait budget, or a host that cannot be
                # reached now, ends the run (unreachable); as fetch_failed it would
                # count against the agent.
                fetched[entry.url] = await session.fetch_document(entry.url, verifying=True)
            body = fetched[entry.url]
        verdict = verify_proposal(entry.digest, body, max_bytes=options.client.max_bytes)
        pairs.append((entry, verdict))
        if not primary:
            continue
        state.agent_nkeys += proposal_keys(body, options.client.max_bytes)
        # PROFILE §8: only the signers of a document the card commits to (its digest is
        # the entry's) are the agent's keys; the record's entry names its signer.
        signers = committed_signers(entry.digest, body, options.client.max_bytes)
        state.signed_keys += signers
        state.proposals.append(
            ProposalRecord(
                entry.url,
                entry.digest,
                verdict.result,
                verdict.signer or (signers[0] if signers else None),
            )
        )
        if not verdict.ok:
            # terms §3: a failing entry states no terms; a signal worth surfacing.
            state.advisories.append(
                Advisory(
                    "terms",
                    verdict.result,
                    source=Source("card", entry.member),
                    detail="the committed proposal failed verification",
                )
            )
    try:
        # The projections of a card near 1 MiB take a second: off the loop (PROFILE §7).
        declared: Declared = await off_loop(Declared.from_verdicts, card, pairs)
        return declared
    except DeclarationError:
        state.add(
            [
                Conflict(
                    Check.declaration,
                    "card_unusable",
                    source=Source("card", "/skills"),
                    detail="the card's skills are not objects with string ids",
                )
            ]
        )
        return None
