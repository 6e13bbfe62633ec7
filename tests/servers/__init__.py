"""Real servers the tests start on 127.0.0.1 from packages the test extras install.

Each module owns one server: how to find its binary, start it on a free loopback port,
wait until it answers, and stop it. ``tests/conftest.py`` exposes them as session fixtures,
so a server starts once per test session and only when a test asks for it.
"""
