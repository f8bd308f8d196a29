"""The drivers' shared floor (D-NET-16): HTTP rules every family reads the same way, below
the families and above the core. Its modules are imported by name (no re-exports):
``failures`` (the ``TransportFailure`` tree), ``urls`` (origins and the scheme policy),
``bodies`` (bodies read under a bound, decoded by :mod:`a2a_interview.codings`) and
``sockets`` (binding a listening socket). It imports the core and no family.
"""
