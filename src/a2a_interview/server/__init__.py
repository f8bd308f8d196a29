"""Drivers that serve the interview: an ASGI layer, the a2a-sdk integration, a proxy.

Requires the ``server`` extra (``pip install 'a2a-interview[server]'``).
"""
