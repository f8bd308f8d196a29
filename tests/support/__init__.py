"""What the tests share, one home each (D-TEST-60): no test module imports another.

- ``servers``: uvicorn on a background thread (``in_thread``, the one such helper) and
  the loopback apps it serves (``serve``, ``serve_many``);
- ``ports``: free and closed loopback ports and sockets;
- ``cli``: the command line run in process (``run``) or as a child process (``command``);
- ``keys``: the reference keys in the spellings tests need, base64url and PEM;
- ``proxy``, ``recorder``: the proxy's test upstreams, the proxy served on a thread and
  as the ``proxy`` command;
- ``sockets``: raw connections to a bounded server (``bounded``) and ``demo serve``;
- ``ledger``: result records and outcomes for the ledger's tests;
- ``checks``, ``verify``, ``spellings``: the declared documents and answers the checks'
  tests judge, a verify run read back, the request spellings served.

``tests/test_test_layout.py`` holds that no ``test_*`` module imports another and that
no helper is written twice.
"""
