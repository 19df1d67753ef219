"""Test support (cassettes, mock transports).  Never imported by the ``zigai`` package."""
