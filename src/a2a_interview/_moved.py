"""Import paths of 0.6 kept for a deprecation period (README, "Upgrading from 0.6").

The core is grouped into parts (``card/``, ``record/``, ``checks/``) and every name has
one home: where it is defined, or a facade (D-CORE-22). What 0.6 offered elsewhere still
imports, with a ``DeprecationWarning`` that names the new home:

- a module that became a private part of a package (``a2a_interview.cardsig``, ...):
  :data:`MODULES`, answered by a finder at the end of ``sys.meta_path`` that knows those
  names only (there is no file at the old path, so a name of a real module always wins);
- a name a module passed on from another (``verifier.client``'s failures, ...):
  :data:`NAMES`, answered by that module's ``__getattr__`` through :func:`moved_name`
  (``home:new_name`` where the name changed as well);
- a name renamed so that each name means one thing (D-CORE-34): :data:`RENAMED`,
  answered the same way, or by the finder for a moved module.

``tests/test_one_home.py`` checks that each resolves to the same object as its new home
and warns. Nothing here imports a module of the package until a moved name is asked for.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Final

UPGRADING: Final = 'README, "Upgrading from 0.6"'

_FAILURES = "a2a_interview.net.failures"
_URLS = "a2a_interview.net.urls"
_BODIES = "a2a_interview.net.bodies"
_SOCKETS = "a2a_interview.net.sockets"
_VERIFIER = "a2a_interview.verifier"

# The module of 0.6 -> (the facade of its part now, the private module its code is in).
MODULES: Final[Mapping[str, tuple[str, str]]] = {
    "a2a_interview.cardsig": ("a2a_interview.card", "a2a_interview.card._sig"),
    "a2a_interview.cardreadings": ("a2a_interview.card", "a2a_interview.card._readings"),
    "a2a_interview.jose": ("a2a_interview.card", "a2a_interview.card._jose"),
    "a2a_interview.sanity": ("a2a_interview.record", "a2a_interview.record._sanity"),
    "a2a_interview.standing": ("a2a_interview.record", "a2a_interview.record._standing"),
    "a2a_interview.agentkeys": ("a2a_interview.record", "a2a_interview.record._keys"),
    "a2a_interview.findings": ("a2a_interview.checks", "a2a_interview.checks._findings"),
    "a2a_interview.responses": ("a2a_interview.checks", "a2a_interview.checks._responses"),
    "a2a_interview.outcome": ("a2a_interview.checks", "a2a_interview.checks._outcome"),
    # D-VERIFY-88: it held the options and a run's state, never the run.
    "a2a_interview.verifier.run": ("a2a_interview.verifier", "a2a_interview.verifier.state"),
    # Below the families (D-NET-16): modules imported by name, each its own home.
    "a2a_interview.verifier.failures": (_FAILURES, _FAILURES),
    "a2a_interview.verifier.urls": (_URLS, _URLS),
    "a2a_interview.verifier.bodies": (_BODIES, _BODIES),
    # A driver, not the core (D-NET-17).
    "a2a_interview.demo": ("a2a_interview.server.demo", "a2a_interview.server.demo"),
    # Not the PyPI parser of the same name (D-CORE-35).
    "a2a_interview.ijson": ("a2a_interview.strictjson", "a2a_interview.strictjson"),
}


# A module -> {a name it passed on in 0.6 (its __all__ then): the name's home now}.
NAMES: Final[Mapping[str, Mapping[str, str]]] = {
    "a2a_interview.verifier.client": {
        "ACCEPT_ENCODING": "a2a_interview.codings",
        "read_body": _BODIES,
        "CAUSES": _FAILURES,
        "AddressRefused": _FAILURES,
        "BodyTooLarge": _FAILURES,
        "BudgetSpent": _FAILURES,
        "ConnectFailed": _FAILURES,
        "DeadlineExceeded": _FAILURES,
        "EncodingRefused": _FAILURES,
        "InsecureURL": _FAILURES,
        "RateLimited": _FAILURES,
        "RedirectRefused": _FAILURES,
        "TimedOut": _FAILURES,
        "TransportFailure": _VERIFIER,
        "address_kind": "a2a_interview.verifier.addresses",
        "card_url_for": _URLS,
        "check_url": _URLS,
        "is_loopback": _URLS,
        "origin": _URLS,
    },
    "a2a_interview.verifier.procedure": {
        "AskResult": _VERIFIER,
        "AuthenticationRequired": _VERIFIER,
        "CredentialsNotSent": _VERIFIER,
        "NoInterface": _VERIFIER,
        "NotAnswered": _VERIFIER,
        "NotOffered": _VERIFIER,
        "VerifyOptions": _VERIFIER,
        "ask": _VERIFIER,
        "render_report": "a2a_interview.report",
    },
    "a2a_interview.cli": {
        "EXIT_FAILED": "a2a_interview.cli.usage",
        "EXIT_NOT_OFFERED": "a2a_interview.cli.usage",
        "EXIT_OK": "a2a_interview.cli.usage",
        "EXIT_UNREACHABLE": "a2a_interview.cli.usage",
        "EXIT_USAGE": "a2a_interview.cli.usage",
        "UsageError": "a2a_interview.cli.usage",
        "read_input": "a2a_interview.cli.files",
        "write_atomic": "a2a_interview.cli.files",
    },
    "a2a_interview.server.listen": {
        "bind": _SOCKETS,
        "origin_of": _SOCKETS + ":socket_origin",
    },
}


# A module -> {a name of 0.6 it still answers: the name's new name there} (one meaning
# per name, D-CORE-34): the JWS check is not the verifier's procedure, a proposal's
# signing bytes are not a record's, a recorded exchange is not a raw response.
RENAMED: Final[Mapping[str, Mapping[str, str]]] = {
    "a2a_interview.jose": {"verify": "verify_jws"},
    "a2a_interview.terms": {"signing_bytes": "proposal_signing_bytes"},
    "a2a_interview.conformance.replay": {"Exchange": "RecordedExchange"},
}


def _warn(old: str, advice: str, stacklevel: int) -> None:
    message = f"{old} is deprecated: {advice} ({UPGRADING})"
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)


def moved_name(module: str, name: str) -> object:
    """The ``__getattr__`` of a module in :data:`NAMES` or :data:`RENAMED`: a name it
    passed on, from its home; a name it renamed, by its new name."""
    new_name = RENAMED.get(module, {}).get(name)
    if new_name is not None:
        _warn(f"{module}.{name}", f"it is {module}.{new_name}", stacklevel=3)
        return getattr(sys.modules[module], new_name)
    home = NAMES.get(module, {}).get(name)
    if home is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    home, _, new = home.partition(":")
    new = new or name
    _warn(f"{module}.{name}", f"import {new} from {home}", stacklevel=3)
    return getattr(importlib.import_module(home), new)


def _old_module_attr(module: str, name: str) -> object:
    """A name of a module of :data:`MODULES`: from the part's facade, else its private module."""
    facade_name, private_name = MODULES[module]
    facade = importlib.import_module(facade_name)
    new_name = RENAMED.get(module, {}).get(name)
    if new_name is not None:
        _warn(f"{module}.{name}", f"it is {new_name} (internal, {private_name})", stacklevel=2)
        return getattr(importlib.import_module(private_name), new_name)
    if name in getattr(facade, "__all__", ()):
        _warn(f"{module}.{name}", f"import {name} from {facade_name}", stacklevel=2)
        return getattr(facade, name)
    private = importlib.import_module(private_name)
    if not name.startswith("__") and hasattr(private, name):
        advice = f"{name} is internal now ({private_name}) and may change without notice"
        _warn(f"{module}.{name}", advice, stacklevel=2)
        return getattr(private, name)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the modules of :data:`MODULES`: each an empty module whose names resolve late."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        facade, _ = MODULES[module.__name__]
        module.__doc__ = f"Deprecated: {module.__name__} is now {facade} ({UPGRADING})."
        module.__dict__["__getattr__"] = functools.partial(_old_module_attr, module.__name__)


def install() -> None:
    """Put the finder of the old module paths at the end of ``sys.meta_path``, once."""
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.append(_OldPaths())
