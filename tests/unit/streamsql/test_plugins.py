"""Connectors from other packages are found through the `streamsql.connectors` entry points."""

from __future__ import annotations

from typing import Any

import pytest

import streamsql.plugins as plugins
from runtime.connectors.base import ConfigOption, ConnectorFactory, get_connector


class _EP:
    def __init__(self, name: str, obj: Any) -> None:
        self.name = name
        self._obj = obj

    def load(self) -> Any:
        return self._obj


def test_entry_point_connector_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = ConnectorFactory("plugin-test", "a test connector", (ConfigOption("x", description="x"),))
    monkeypatch.setattr(plugins, "_loaded", False)
    monkeypatch.setattr(plugins, "_group", lambda group: [_EP("plugin-test", lambda: factory)])
    assert plugins.load_connector_plugins() == ["plugin-test"]
    assert get_connector("plugin-test") is factory


def test_bad_entry_point_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "_loaded", False)
    monkeypatch.setattr(plugins, "_group", lambda group: [_EP("bad", object())])
    with pytest.raises(TypeError):
        plugins.load_connector_plugins()
