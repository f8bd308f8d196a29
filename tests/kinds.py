"""Which tests prove values and which prove transport (D-TEST-12): a pytest plugin that
marks every test by its module, from the one table below (``tests/README.md`` says why).

- ``vectors``: the expected values come from outside the code under test: the draft's
  and RFCs' examples byte for byte, the shared vector corpora, values written out by hand,
  or another implementation (``rfc8785``, a2a-sdk, ``@a2a-js/sdk``). Correctness of the
  core (I-JSON, JCS, pointers, projections, terms, signatures, records, checks) is proven
  here.
- ``transport``: the expected bytes come from this package itself (``interview.answer``,
  ``IV.refusal``, the zoo's honest agent projecting with ``projection.Interview``, the
  verifier projecting the same way). These prove that answers travel, are served and are
  checked unchanged through the bindings, servers and proxy, not that they are right: a
  wrong projection would pass them and fail the ``vectors`` tests.
- ``behaviour``: rules of conduct that are neither: bounds under attack, files, exit
  codes, the ledger's storage and pages, the shape of the package and of the suite.

``pytest -m vectors`` runs where correctness is proven. ``tests/test_suite_rules.py``
holds that every test module is in the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

KINDS: dict[str, str] = {
    # vectors: expected values independent of the code under test
    "test_jcs": "vectors",  # RFC 8785 corpus, the rfc8785 package
    "test_strictjson": "vectors",  # RFC 7493 rules, hand-written inputs and errors
    "test_card_spellings": "vectors",  # a card's interfaces under proto names, by hand
    "test_pointer": "vectors",  # RFC 6901 examples
    "test_projection": "vectors",  # the draft's §5/§6 examples byte for byte, member lists
    "test_models": "vectors",  # the draft's member sets, written out
    "test_terms": "vectors",  # terms-extension.md examples
    "test_cardsig": "vectors",  # the card-sign corpus, a2a-sdk's signer both ways
    "test_jose": "vectors",  # RFC 7517/7638 rules, keys written out by hand
    "test_cardproto": "vectors",  # a2a-sdk's own descriptors and canonical form
    "test_reference": "vectors",  # the bundled declarations against the draft
    "test_rpc": "vectors",  # PROFILE §3 error bytes written out
    "test_rpc_fast": "behaviour",  # the fast reading against the general one (D-SERVE-37)
    "test_codings": "vectors",  # RFC 9110 §8.4, RFC 1952 §2.2 inputs and verdicts by hand
    "test_record": "vectors",  # the record schema, hand-signed records
    "test_checks": "vectors",  # each check's verdict on one precise mutation, by hand
    "test_cardreadings": "vectors",  # a card signature's readings, payloads by hand
    "test_outcome": "vectors",  # PROFILE §7 outcomes and statuses at their edges, by hand
    "test_findings": "vectors",  # how a finding reads, values by hand
    "test_responses": "vectors",  # responses that are not answers, bodies by hand
    "test_display": "vectors",  # the ledger's display rules on hand-written documents
    "test_sanity": "vectors",  # a record's times and identity, records by hand
    "test_agentkeys": "vectors",  # the keys a record names for the agent
    "test_standing": "vectors",  # PROFILE §8 standing on hand-written records
    "test_a2a03": "vectors",  # a2a-sdk 0.3's own agent and card (interop)
    "test_js_agent": "vectors",  # @a2a-js/sdk's own agent (interop)
    "test_js_stock_card": "vectors",  # @a2a-js/sdk's agent with its typed card (interop)
    "test_a2a03_versions": "vectors",  # a2a-sdk 0.3's own agent under every version
    "test_signers": "vectors",  # cards signed by the official SDKs' signers (interop)
    "test_our_signatures": "vectors",  # our signatures judged by both SDKs' verifiers
    "test_clients": "vectors",  # a2a-sdk's and @a2a-js/sdk's clients ask (interop)
    "test_stock_matrix": "vectors",  # stock SDK agents, verdicts written out (interop)
    "test_conformance_vectors": "vectors",  # draft facts checked with json + rfc8785 only
    "test_conformance_node": "vectors",  # another implementation, in Node.js, passes them
    # transport: expected bytes from this package's own projection
    "test_asgi": "transport",
    "test_sdk": "transport",
    "test_http_rules": "transport",  # answers compared with the served declarations
    "test_spellings": "transport",
    "test_fuzz_servers": "transport",
    "test_no_model": "transport",
    "test_non_interference": "transport",
    "test_proxy": "transport",
    "test_proxy_parity": "transport",
    "test_proxy_wire": "transport",
    "test_proxy_deadlines": "behaviour",  # the proxy's body deadlines under one timer (D-PROXY-50)
    "test_proxy_cli": "transport",
    "test_proxy_cards": "transport",  # the cards the proxy serves, signed or extended
    "test_sdk_mount": "transport",  # the SDK routes under a Starlette Mount
    "test_verify_zoo": "transport",  # honest agent and verifier both project
    "test_verify_many": "transport",
    "test_wire": "transport",
    "test_readme": "transport",
    "test_lifecycle": "transport",
    "test_ratelimit": "transport",
    "test_cli_serve": "transport",
    "test_cli_verify": "transport",
    "test_profile_command": "behaviour",  # the profile shipped and printed
    "test_release_recipe": "behaviour",  # install lines and the release workflow
    "test_verify_lows": "transport",  # small cases of stock agents, over loopback
    "test_extended_card": "transport",  # the extended card fetched, over loopback
    "test_credential_origins": "transport",  # where credentials go, over real sockets
    "test_ask_failures": "transport",  # ask's failures, a gRPC-only card, over loopback
    "test_demo": "transport",
    "test_evidence": "transport",
    "test_verify_run": "transport",  # card variants, bounds and causes over loopback
    "test_defaults_fit": "transport",  # a default verify against the default servers
    "test_verify_many_population": "transport",  # a mixed real population (interop)
    "test_conformance_serving": "transport",  # our layers through the published vectors
    "test_conformance_js": "transport",  # the proxy before @a2a-js/sdk, through the runner
    "test_conformance_replay": "transport",  # recorded verify runs replayed
    # behaviour: rules of conduct, neither values nor transport
    "test_bounds": "behaviour",
    "test_hostile_zoo": "behaviour",
    "test_cli_files": "behaviour",
    "test_cli_ledger": "behaviour",
    "test_cli_publish": "behaviour",
    "test_cli_record": "behaviour",
    "test_console": "behaviour",
    "test_ledger_browser": "behaviour",
    "test_ledger_memo": "behaviour",
    "test_ledger_store": "behaviour",
    "test_ledger_web": "behaviour",
    "test_workers": "behaviour",
    "test_core_boundary": "behaviour",
    "test_docs_security": "behaviour",
    "test_suite_rules": "behaviour",
    "test_test_layout": "behaviour",  # no test module imports another; helpers written once
    "test_import_graph": "behaviour",
    "test_one_home": "behaviour",  # one home per name, facades pinned, old paths warn
    "test_shape": "behaviour",  # module and function lengths, one name one meaning
    "test_listen_attacks": "behaviour",
    "test_version_hosts": "behaviour",  # no layer stricter than its host on A2A-Version
    "test_card_caching": "behaviour",  # the A2A TCK's card caching assertions
    "test_ci_recipe": "behaviour",
    "test_cli_small": "behaviour",
    "test_cli_defaults": "behaviour",  # documented defaults against the code (D-CLI-39)
    "test_spec_registry": "behaviour",  # what the question registry derives (D-CORE-28)
    "test_docs_selfcontained": "behaviour",
    "test_install_extras": "behaviour",
    "test_make_test": "behaviour",
    "test_conformance_cli": "behaviour",  # the runner's table, JUnit and exit codes
    "test_hostile_keys": "behaviour",
    "test_bench_runs": "behaviour",  # every bench teaches its use; the ledger ones run
    "test_cardurl": "vectors",  # RFC 3986 §6.2.2 normalization, URLs written out
    "test_proposal_signers": "behaviour",  # only a committed document names agent keys
    "test_ledger_verified": "behaviour",  # runners by verified keys, one agent one line
    "test_ledger_lows": "behaviour",
    "test_ledger_short_search": "behaviour",
    "test_ledger_import_stream": "behaviour",
    "test_worker_recovery": "behaviour",  # a real worker SIGKILLed on real PostgreSQL
    "test_proxy_connections": "transport",  # the proxy's bounded upstream connections
    "test_proxy_framing": "transport",  # upstream framing per RFC 9112
    "test_proxy_slow_readers": "behaviour",
    "test_conformance_ci": "behaviour",  # the conformance CI recipe run as written
    "test_verify_sampling": "behaviour",  # what a default run asks, and what it catches
    "test_pace": "behaviour",  # the concurrency controller's decisions, made-up windows
    "test_citations": "behaviour",  # every citation resolves inside the clone
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        kind = KINDS.get(Path(str(item.path)).stem)
        if kind is not None:
            item.add_marker(getattr(pytest.mark, kind))
