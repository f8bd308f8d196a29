"""The conformance kit (docs/conformance.md): the serving calls every implementation of
the interview is driven through, the responses expected of it, and a runner.

``calls`` is pure: it turns a card into concrete HTTP requests and derives each one's
expected response from the core (``rpc``, ``projection``). ``judge`` compares a response
with its expectation and says at which level (``draft`` or ``profile``) it fails.
``vectors`` writes and reads the published vector files of ``conformance/`` at the top of
the repository. ``runner`` drives a live server over HTTP (httpx).
"""
