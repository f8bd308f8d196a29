"""Each name has one home (D-CORE-22): the module that defines it, or a listed facade.

Read from the source with ``ast``, as ``tests/test_import_graph.py`` reads it: a name a
module binds at its top level (``def``, ``class``, an assignment) is defined there; a
name it imports is not. Two rules follow:

- only a facade passes names on: a module that is not in :data:`FACADES` lists in its
  ``__all__`` only names it defines;
- ``src/`` imports a name from where it is defined, or from a facade that lists it in
  its ``__all__`` (a facade lists only names of its own package, the root excepted).

Each facade's ``__all__`` is pinned below, so a change to an API is a visible diff. The
paths of 0.6 keep working for a deprecation period (D-CORE-23, README "Upgrading from
0.6"): each resolves to the object of its new home and warns, naming it.

    python tests/test_one_home.py [PACKAGE_DIR]   # the counts, for any tree
"""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "a2a_interview"

# The facades: the root, the core's parts, and the families' documented facades
# (docs/architecture.md). Every other module passes nothing on.
FACADES = frozenset({
    "a2a_interview",
    "a2a_interview.card",
    "a2a_interview.record",
    "a2a_interview.checks",
    "a2a_interview.verifier",
    "a2a_interview.ledger",
    "a2a_interview.ledger.store",
    "a2a_interview.server.proxy",
    "a2a_interview.rpc",
})  # fmt: skip

PINNED: dict[str, list[str]] = {
    "a2a_interview.rpc": [
        "JSON_CONTENT_TYPE", "MAX_REQUEST_BYTES", "NOT_ACTIVATED", "REST_INVALID",
        "REST_SEGMENT", "REST_TOO_MANY", "REST_VERSION_NOT_SUPPORTED", "SCAN_SLICE",
        "Activation", "Reply", "Version", "activation", "content_codings",
        "declared_versions", "decoded_body", "jsonrpc", "may_name_namespace",
        "negotiated_versions", "normalize_path", "parse_version", "path_key",
        "path_segments", "requested_version", "rest", "rpc_error", "too_large",
        "too_many_requests", "version_refusal", "version_supported",
    ],
    "a2a_interview.card": [
        "ALGORITHMS", "QUIRK_NULL_HEADER_MEMBER", "READINGS", "REASON_ALG_REFUSED",
        "REASON_BAD_SIGNATURE", "REASON_MALFORMED", "REASON_NOT_CANONICAL", "REASON_NO_KEY",
        "CardSignatureReport", "KeySource", "PrivateKey", "PublicKey", "Reading",
        "SignReading", "SignatureCheck", "SignatureStatus", "alg_for_key", "generate_key",
        "import_public_jwk", "is_1_0_card", "is_signed", "jwk_to_public_key",
        "jwks_from_json", "load_private_key", "private_jwk", "public_jwk", "sign_card",
        "sign_readings", "signing_payload", "thumbprint", "verify_card",
    ],
    "a2a_interview.record": [
        "CLOCK_SKEW", "DOES_NOT_ESTABLISH", "OUTCOME_WORDS", "PARTIES", "SANITY_REASONS",
        "STANDING_REASONS", "STANDING_WHY", "UNKNOWN_OUTCOME_WORDS", "CallRecord",
        "CardSignature", "CredentialKind", "Credentials", "ExtendedCard", "Incomplete",
        "Insane", "Party", "ProposalRecord", "RanBy", "RecordSignature", "ResultRecord",
        "Run", "Sampling", "SanityReason", "Standing", "StandingReason", "agent_key_ids",
        "agent_name", "card_key_ids", "card_name", "committed_signers", "member_at",
        "nkey_jwk", "nkey_thumbprint", "parse_rfc3339", "proposal_keys", "proposal_signer",
        "read_record", "record_identity", "record_sanity", "rfc3339", "schema",
        "sign_record", "signing_bytes", "standing_given", "standing_of", "standing_reason",
        "verified_key_ids", "verify_record_signature",
    ],
    "a2a_interview.checks": [
        "ABSENT", "CHECKS", "NOWHERE", "Advisory", "Binding", "Check", "CheckStatus",
        "Conflict", "Declared", "Exchange", "Interface", "Outcome", "ResultRead", "Value",
        "Where", "check_answer", "check_card_signature", "check_closure",
        "check_declaration", "check_determinism", "check_echo", "check_inactive",
        "check_interfaces_agree", "check_terms_declared", "coverage", "derive_outcome",
        "diff_answer", "find_interfaces", "is_binding_answer", "no_match_selector",
        "overall_statuses", "read_result", "run_statuses",
    ],
    "a2a_interview.verifier": [
        "AskResult", "AuthenticationRequired", "CredentialsNotSent", "NoInterface",
        "NotAnswered", "NotOffered", "TransportFailure", "VerifyOptions", "ask",
        "failed_record", "verify",
    ],
    "a2a_interview.ledger.store": [
        "DEFAULT_STORE", "MAX_NAME", "MAX_URL", "MIGRATIONS", "SEARCH_RULE", "VERSION_TABLE",
        "AgentLine", "AgentSummary", "Ledger", "ListedRecord", "RunnerSeen", "StoredRecord",
        "Totals", "agent_key", "agents_table", "meta", "parse_store_url", "records",
        "search_text", "searchable",
    ],
    "a2a_interview.server.proxy": [
        "CONNECT_TIMEOUT", "DEFAULT_BODY_TIMEOUT", "DEFAULT_MAX_BODY", "DEFAULT_POLL",
        "DEFAULT_TIMEOUT", "MAX_REDIRECTS", "MAX_VARIANTS", "POOL_TIMEOUT",
        "STREAM_IDLE_TIMEOUT", "UNVERIFIED_RETRY", "UPSTREAM_CONNECTIONS", "ProxyApp",
        "ProxyError", "ProxyInfo", "ProxyOptions", "UpstreamDeclarations", "build_proxy",
        "bypassing", "describe", "run", "serve", "server_config", "trusted_peers",
        "variant_key",
    ],
}  # fmt: skip
# Pinned in their own tests: the root (tests/test_core_boundary.py) and the ledger's
# family facade (tests/test_ledger_store.py).
PINNED_ELSEWHERE = frozenset({"a2a_interview", "a2a_interview.ledger"})

# The __all__ of each module of 0.6 that is now a private part of a package.
OLD_ALL: dict[str, list[str]] = {
    "a2a_interview.ijson": ["JSON", "JSONObject", "loads"],
    "a2a_interview.verifier.run": [
        "DEFAULT_DEADLINE", "Abandoned", "RunState", "Stop", "Variant", "VerifyOptions",
        "auth_required", "bounded", "off_loop", "progress", "transport_incomplete",
    ],
    "a2a_interview.cardsig": [
        "ALGORITHMS", "QUIRK_NULL_HEADER_MEMBER", "READINGS", "REASON_ALG_REFUSED",
        "REASON_BAD_SIGNATURE", "REASON_MALFORMED", "REASON_NOT_CANONICAL", "REASON_NO_KEY",
        "CardSignatureReport", "KeySource", "PrivateKey", "PublicKey", "Reading",
        "SignReading", "SignatureCheck", "SignatureStatus", "alg_for_key", "generate_key",
        "is_1_0_card", "is_signed", "jwk_to_public_key", "jwks_from_json",
        "load_private_key", "private_jwk", "public_jwk", "sign_card", "sign_readings",
        "signing_payload", "thumbprint", "verify_card",
    ],
    "a2a_interview.cardreadings": [
        "READINGS", "Candidate", "Reading", "candidates", "is_1_0_card", "proto_candidates",
        "signing_payload", "without_signatures",
    ],
    "a2a_interview.jose": [
        "ALGORITHMS", "PrivateKey", "PublicKey", "alg_for_key", "b64d", "b64e", "check_alg",
        "generate_key", "import_public_jwk", "is_private_key", "jwk_to_public_key",
        "jwks_from_json", "key_algs", "load_private_key", "private_jwk", "public_jwk",
        "sign", "thumbprint", "verify",
    ],
    "a2a_interview.sanity": [
        "CLOCK_SKEW", "SANITY_REASONS", "Insane", "SanityReason", "member_at",
        "parse_rfc3339", "record_identity", "record_sanity", "rfc3339",
    ],
    "a2a_interview.standing": [
        "STANDING_REASONS", "STANDING_WHY", "RecordSignature", "Standing", "StandingReason",
        "sign_record", "signing_bytes", "standing_given", "standing_of", "standing_reason",
        "verify_record_signature",
    ],
    "a2a_interview.agentkeys": [
        "agent_key_ids", "card_key_ids", "committed_signers", "nkey_jwk", "nkey_thumbprint",
        "proposal_keys", "proposal_signer", "verified_key_ids",
    ],
    "a2a_interview.findings": [
        "ABSENT", "CHECKS", "NOWHERE", "Advisory", "Check", "Conflict", "Value", "Where",
    ],
    "a2a_interview.responses": [
        "Binding", "Exchange", "Interface", "ResultRead", "find_interfaces",
        "is_binding_answer", "read_result",
    ],
    "a2a_interview.outcome": [
        "CheckStatus", "Outcome", "derive_outcome", "overall_statuses", "run_statuses",
    ],
    "a2a_interview.verifier.failures": [
        "CAUSES", "AddressRefused", "BodyTooLarge", "BudgetSpent", "ConnectFailed",
        "DeadlineExceeded", "EncodingRefused", "InsecureURL", "NotItsBinding", "RateLimited",
        "RedirectRefused", "TimedOut", "TransportFailure", "Unavailable",
        "without_credentials",
    ],
    "a2a_interview.verifier.urls": [
        "card_url_for", "check_url", "is_loopback", "origin", "origin_text",
    ],
    "a2a_interview.verifier.bodies": ["read_body"],
    "a2a_interview.demo": ["BOUNDS", "build_app", "executor", "serve"],
}  # fmt: skip


# --- reading the tree ------------------------------------------------------------------


class Module:
    """One module as ``ast`` reads it: what it defines, what it imports, its ``__all__``."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.defines: set[str] = set()
        self.all: list[str] = []
        for node in _top_level(self.tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.defines.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self.defines |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                if any(getattr(t, "id", None) == "__all__" for t in targets) and node.value:
                    self.all = list(ast.literal_eval(node.value))

    def imports(self) -> Iterator[tuple[str, str, int]]:
        """Each ``from X import name`` anywhere in the module: (X, name, line)."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    yield source, alias.name, node.lineno


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                yield from _top_level(part)
        else:
            yield node


def read_tree(package: Path) -> dict[str, Module]:
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = Module(".".join(parts), path)
    return modules


def passed_on(modules: dict[str, Module], facades: frozenset[str]) -> dict[str, list[str]]:
    """Per module that is not a facade: the names its ``__all__`` lists but it does not
    define."""
    found = {}
    for name, module in modules.items():
        extra = [n for n in module.all if n not in module.defines]
        if name not in facades and extra:
            found[name] = sorted(extra)
    return found


def second_homes(modules: dict[str, Module], facades: frozenset[str]) -> list[str]:
    """Each import in the tree of a name of the package from a module that neither
    defines it nor is a facade listing it: ``importer:line: name from source``."""
    found = []
    for name, module in modules.items():
        for source, imported, line in module.imports():
            home = modules.get(source)
            if home is None or f"{source}.{imported}" in modules:
                continue  # another package's name, or a module
            if imported in home.defines:
                continue
            if source in facades and imported in home.all:
                continue
            found.append(f"{name}:{line}: {imported} from {source}")
    return found


def counts(package: Path, facades: frozenset[str] = FACADES) -> dict[str, int]:
    """The figures of D-CORE-22: names passed on by modules that are not facades, and
    import sites through a module that neither defines the name nor is a facade (of
    ``facades``, those that are packages in the tree read: an older tree's ``record.py``
    was a module that passed names on, not a facade)."""
    modules = read_tree(package)
    facades = frozenset(f for f in facades if f in modules and modules[f].package == f)
    return {
        "names passed on by a module that is not a facade": sum(
            len(v) for v in passed_on(modules, facades).values()
        ),
        "import sites through a second home": len(second_homes(modules, facades)),
    }


# --- the rules --------------------------------------------------------------------------


def test_only_facades_pass_names_on() -> None:
    # D-CORE-22: a module's __all__ is what it defines; only a facade lists others' names.
    assert passed_on(read_tree(PACKAGE), FACADES) == {}


def test_src_imports_each_name_from_its_home() -> None:
    # D-CORE-22: from where the name is defined, or from a facade that lists it.
    assert second_homes(read_tree(PACKAGE), FACADES) == []


def test_a_facade_passes_on_only_its_own_package() -> None:
    # D-CORE-22: card/ exports card's names, not record's; the root is the whole core's.
    # A family's facade may also pass on the failures its callers meet from the shared
    # floor below the families (D-NET-16: `verifier`'s TransportFailure).
    modules = read_tree(PACKAGE)
    for facade in sorted(FACADES - {"a2a_interview"}):
        for source, imported, _ in modules[facade].imports():
            if imported in modules[facade].all:
                own = source.startswith(facade + ".")
                floor = source == "a2a_interview.net.failures" and "." not in facade[14:]
                assert own or floor, (facade, imported, source)


@pytest.mark.parametrize("facade", sorted(PINNED))
def test_every_facade_all_is_pinned(facade: str) -> None:
    module = importlib.import_module(facade)
    assert sorted(module.__all__) == sorted(PINNED[facade])
    for name in module.__all__:
        assert hasattr(module, name), name


def test_the_facades_are_every_package_that_passes_names_on() -> None:
    # A new package that re-exports is listed (and pinned) here, or the rules above fail.
    assert set(PINNED) | PINNED_ELSEWHERE == FACADES


def test_the_checks_can_fail(tmp_path: Path) -> None:
    # The checkers themselves, on a tree made to break both rules.
    package = tmp_path / "pkg"
    (package / "part").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f(): ...\nX = 1\n")
    (package / "mid.py").write_text("from .low import f\n__all__ = ['f', 'g']\ndef g(): ...\n")
    (package / "top.py").write_text("def h():\n    from .mid import f, g\n")
    (package / "part" / "__init__.py").write_text("from ..low import X\n__all__ = ['X']\n")
    (package / "user.py").write_text("from .part import X\nfrom .mid import g\n")
    modules = read_tree(package)
    assert passed_on(modules, frozenset({"pkg"})) == {"pkg.mid": ["f"], "pkg.part": ["X"]}
    assert passed_on(modules, frozenset({"pkg", "pkg.part"})) == {"pkg.mid": ["f"]}
    assert second_homes(modules, frozenset({"pkg"})) == [
        "pkg.top:2: f from pkg.mid",
        "pkg.user:1: X from pkg.part",
    ]
    assert second_homes(modules, frozenset({"pkg", "pkg.part"})) == ["pkg.top:2: f from pkg.mid"]


# --- the paths of 0.6 -------------------------------------------------------------------


def _resolve_warned(module: str, name: str) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module(module), name)
    return value, [str(w.message) for w in caught if w.category is DeprecationWarning]


@pytest.mark.parametrize("old", sorted(OLD_ALL))
def test_a_moved_module_resolves_each_name_to_its_new_home_and_warns(old: str) -> None:
    # D-CORE-23: every name the 0.6 module listed, the same object, a warning naming where.
    from a2a_interview._moved import MODULES, RENAMED

    facade, private = MODULES[old]
    assert not (PACKAGE.parent / (old.replace(".", "/") + ".py")).exists()
    for name in OLD_ALL[old]:
        value, messages = _resolve_warned(old, name)
        now = RENAMED.get(old, {}).get(name, name)  # D-CORE-34: one meaning per name
        new = facade if now in importlib.import_module(facade).__all__ else private
        assert value is getattr(importlib.import_module(new), now), name
        assert len(messages) == 1, name
        assert f"{old}.{name} is deprecated" in messages[0]
        assert new in messages[0]
    with pytest.raises(AttributeError):
        _resolve_warned(old, "no_such_name")


def test_a_name_a_module_passed_on_resolves_to_its_home_and_warns() -> None:
    # D-CORE-23: verifier.client's failures, procedure's ask, ... from their homes.
    from a2a_interview._moved import NAMES

    for module, names in NAMES.items():
        for name, moved in names.items():
            home, _, new = moved.partition(":")  # home:new_name when renamed as well
            value, messages = _resolve_warned(module, name)
            assert value is getattr(importlib.import_module(home), new or name), (module, name)
            if name in vars(importlib.import_module(module)):
                continue  # still imported there for its own use: no warning to give
            assert len(messages) == 1, (module, name)
            assert f"{module}.{name} is deprecated" in messages[0]
            assert f"from {home}" in messages[0]
        with pytest.raises(AttributeError):
            _resolve_warned(module, "no_such_name")


def test_a_renamed_name_resolves_to_its_new_name_and_warns() -> None:
    # D-CORE-34: the JWS check is verify_jws, a proposal's signing bytes
    # proposal_signing_bytes; the names of 0.6 still answer, warning.
    from a2a_interview._moved import MODULES, RENAMED

    assert RENAMED
    for module, names in RENAMED.items():
        for old, new in names.items():
            value, messages = _resolve_warned(module, old)
            home = MODULES[module][1] if module in MODULES else module
            assert value is getattr(importlib.import_module(home), new), (module, old)
            assert len(messages) == 1, (module, old)
            assert f"{module}.{old} is deprecated" in messages[0]
            assert new in messages[0]


def test_readme_lists_every_old_path_with_its_new_home() -> None:
    # D-CORE-23: README's "Upgrading from 0.6" names each old path and where it went.
    from a2a_interview._moved import MODULES, NAMES, RENAMED

    readme = (PACKAGE.parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Upgrading from 0.6", 1)[1].split("\n## ", 1)[0]
    for old, (facade, _) in MODULES.items():
        assert f"`{old}`" in section and f"`{facade}`" in section, old
    for module in NAMES:
        assert f"`{module}`" in section, module
    for names in RENAMED.values():
        for old_name, new_name in names.items():
            assert f"`{old_name}`" in section and f"`{new_name}`" in section, old_name


def test_src_imports_no_old_path() -> None:
    # The package itself never goes through a deprecated path.
    from a2a_interview._moved import MODULES, NAMES

    for name, module in read_tree(PACKAGE).items():
        for source, imported, line in module.imports():
            assert source not in MODULES, f"{name}:{line}"
            assert imported not in NAMES.get(source, {}), f"{name}:{line}: {imported}"


if __name__ == "__main__":
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE
    for label, figure in counts(where).items():
        print(f"{figure:5d}  {label}")
