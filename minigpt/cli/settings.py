"""``minigpt settings``: read and change the settings ``minigpt.settings`` declares, by key.

``set`` reads the value as the setting's type and refuses what the setting does not accept in one
line. A key family can have a check of its own: a group above this command puts it in the click
context's ``meta`` under ``CHECKS_KEY``. The app's command gives the one for ``keys.<binding id>``
(the id, the key names, clashes), which needs the app's bindings; the headless command alone
refuses to store keys it cannot check.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from minigpt import settings as store_settings
from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError

_FLAG_WORDS = {"true": "1", "yes": "1", "on": "1", "1": "1", "false": "0", "no": "0", "off": "0", "0": "0"}
_UNREADABLE = (ValueError, TypeError, ArithmeticError, RecursionError)


def _app_only(_store, item: str, _text: str) -> str:
    raise UserError(f"keys.{item}: keys are checked against the app's bindings: set them with the "
                    "`minigpt` command (minigpt settings set keys.<id> KEYS)")


# family prefix → check(store, item, text) returning the text to store, raising a TutorError if not.
CHECKS_KEY = "minigpt.settings.checks"
DEFAULT_CHECKS: dict[str, Callable[[object, str, str], str]] = {store_settings.KEYS.prefix: _app_only}


def _store():
    from minigpt import paths
    from minigpt.store import Store

    return Store(paths.database_path())


def _value(setting: store_settings.Setting, text: str):
    """The value typed on the command line, as the setting's type ("none" for a setting whose
    default is none)."""
    if setting.default is None and text.strip().lower() == "none":
        return None
    if setting.parse is store_settings._flag:
        text = _FLAG_WORDS.get(text.strip().lower(), text)
    try:
        return setting.parse(text)
    except _UNREADABLE:
        raise UserError(f"the setting {setting.key} ({setting.description}) must be {setting.accepts}, "
                        f"not {text!r}") from None


def _shown(setting: store_settings.Setting, value) -> str:
    return "none" if value is None or value == () else setting.dump(value) if setting.valid(value) else repr(value)


def _family_check(key: str):
    checks = {**DEFAULT_CHECKS, **click.get_current_context().meta.get(CHECKS_KEY, {})}
    return next(((prefix, check) for prefix, check in checks.items() if key.startswith(prefix)), (None, None))


@click.group("settings")
def settings() -> None:
    """Read and change the tutor's settings (study limits, the theme, the keys of the app)."""


@settings.command("list")
def list_settings() -> None:
    """Every setting with its value, then the keys you remapped."""
    try:
        store = _store()
        try:
            for setting in store_settings.declared():
                click.echo(f"{setting.key} = {_shown(setting, store_settings.get(store, setting))}"
                           f"    ({setting.description})")
            keys, _unreadable = store_settings.members(store, store_settings.KEYS)
            for item, value in keys.items():
                click.echo(f"{store_settings.KEYS.prefix}{item} = {value}")
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e


@settings.command("get")
@click.argument("key")
def get_setting(key: str) -> None:
    """Print one setting's value (its default when none is stored)."""
    try:
        setting = store_settings.lookup(key)
        store = _store()
        try:
            click.echo(_shown(setting, store_settings.get(store, setting)))
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e


@settings.command("set")
@click.argument("key")
@click.argument("value")
def set_setting(key: str, value: str) -> None:
    """Store VALUE for KEY, e.g. `minigpt settings set keys.quiz.submit ctrl+j`."""
    try:
        setting = store_settings.lookup(key)
        store = _store()
        try:
            prefix, check = _family_check(key)
            if check is not None:
                value = check(store, key[len(prefix):], value)
            new = _value(setting, value)
            store_settings.set(store, setting, new)
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e
    click.echo(f"{key} = {_shown(setting, new)}")


@settings.command("clear")
@click.argument("key")
def clear_setting(key: str) -> None:
    """Remove KEY's stored value: it is back to its default."""
    try:
        setting = store_settings.lookup(key)
        store = _store()
        try:
            store_settings.clear(store, setting)
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e
    click.echo(f"{key}: back to its default ({_shown(setting, setting.default)})")
