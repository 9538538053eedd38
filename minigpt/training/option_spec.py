"""One training option's declaration: ``Option`` (what the CLI flag, the form field and the checks
are made from) and ``option()``, the ``field`` every ``TrainConfig`` field is declared with
(``minigpt/training/options.py`` reads the list from those declarations). No torch.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field

from minigpt.errors import ConfigError
from minigpt.numbers import number_text

MODEL_KINDS = ("gpt", "mlp", "bigram")


@dataclass(frozen=True)
class Option:
    """One training option: what the CLI flag, the form field and the checks are made from."""

    name: str  # the TrainConfig field
    kind: type  # int, float, str or bool (from the field's annotation)
    default: object
    optional: bool  # None is allowed (the annotation says "| None"); none_means says what it does
    help: str
    label: str  # the form's label and the name in messages
    advanced: bool = False  # shown under the form's "advanced" fold
    models: tuple[str, ...] = MODEL_KINDS  # the model kinds it changes anything for
    choices: tuple[str, ...] | None = None
    ge: float | None = None  # bounds: ≥, >, ≤, <
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    none_means: str | None = None  # what None (a blank field, no flag) does
    hint: str | None = None  # the form's placeholder (default: none_means)
    flag: str | None = None  # the CLI flag when not --name-with-dashes
    one_of: str | None = None  # options sharing this name are alternatives: exactly one is set

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def placeholder(self) -> str:
        return self.hint or self.none_means or ""

    @property
    def default_text(self) -> str:
        """The default as the help and the form say it."""
        if self.default is None:
            return self.none_means or "none"
        return format_value(self.default)

    def applies_to(self, model: str) -> bool:
        return model in self.models

    def bounds_text(self) -> str:
        num = lambda x: number_text(x, thousands="")  # noqa: E731 (whole bounds in full: 1000000)
        lo = f"[{num(self.ge)}" if self.ge is not None else (f"({num(self.gt)}" if self.gt is not None else None)
        hi = f"{num(self.le)}]" if self.le is not None else (f"{num(self.lt)})" if self.lt is not None else None)
        if lo and hi:
            return f" in {lo}, {hi}"
        if lo:
            return (" ≥ " if lo[0] == "[" else " > ") + lo[1:]
        if hi:
            return (" ≤ " if hi[-1] == "]" else " < ") + hi[:-1]
        return ""

    def check(self, value) -> None:
        """Refuse a value of the wrong type, outside the bounds or the choices (``ConfigError``)."""
        if value is None:
            if self.optional:
                return
            self._refuse("a value is needed", value)
        if self.kind is bool:
            if not isinstance(value, bool):
                self._refuse("must be on or off (true or false)", value)
            return
        if self.kind is str:
            if not isinstance(value, str):
                self._refuse("must be text", value)
            if self.choices is not None and value not in self.choices:
                self._refuse(f"must be one of {', '.join(self.choices)}", value)
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                self.kind is int and not isinstance(value, int)) or not math.isfinite(value):
            what = "a whole number" if self.kind is int else "a number"
            self._refuse(f"must be {what}{self.bounds_text()}", value)
        if ((self.ge is not None and not value >= self.ge) or (self.gt is not None and not value > self.gt)
                or (self.le is not None and not value <= self.le) or (self.lt is not None and not value < self.lt)):
            self._refuse(f"must be{self.bounds_text()}", value)

    @property
    def noun(self) -> str:
        """The option's name in a sentence ("budget in seconds" for an alternative)."""
        return f"{self.one_of} in {self.label}" if self.one_of else self.label

    def _refuse(self, reason: str, value) -> typing.NoReturn:
        got = "" if value is None else f", got {value!r}"
        raise ConfigError(f"{self.noun} {reason}{got}" if reason.startswith("must") else
                          f"{self.noun}: {reason}", field=self.name)


def format_value(value) -> str:
    """A value as text that reads back exactly (shortest repr for floats, "20" for 20.0)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e4 else number_text(value)
    return str(value)


def option(default, help: str, *, label: str | None = None, advanced: bool = False,
           models: tuple[str, ...] = MODEL_KINDS, choices: tuple[str, ...] | None = None,
           ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None,
           none_means: str | None = None, hint: str | None = None, flag: str | None = None,
           one_of: str | None = None):
    """A TrainConfig field that is a training option (see the module docstring)."""
    spec = dict(help=help, label=label, advanced=advanced, models=models, choices=choices, ge=ge, gt=gt,
                le=le, lt=lt, none_means=none_means, hint=hint, flag=flag, one_of=one_of)
    return field(default=default, metadata={"option": spec})
