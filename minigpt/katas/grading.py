"""Compare what the learner's function returned with the reference, case by case, and say why not.

:func:`judge` is the one verdict, used both when the learner's code ran in this process (the
tests' wrong solutions, :func:`grade_function`) and when it ran in the bounded runner
(:mod:`minigpt.katas.sandbox`, which hands the outputs over). The expected values are always
computed here, in the grading process, from the kata's ``solution.py``: the bounded runner's
harness never imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from minigpt.errors import KataCodeError
from minigpt.katas import values
from minigpt.katas.catalogue import Kata
from minigpt.katas.forbidden import check_source, guard


@dataclass(frozen=True)
class Failure:
    case: str        # the case's label, in the learner's terms
    given: str       # the input, shortly
    expected: str
    obtained: str
    where: str       # where they differ (or the exception the code raised)
    mistake: str | None = None  # the known mistake it matches, when one does

    def line(self) -> str:
        named = f" — {self.mistake}" if self.mistake else ""
        return f"✗ {self.case}: {self.where}{named}"

    def details(self, with_mistake: bool = True) -> str:
        """The case in full: where it differs first (what a learner reads first), the input last."""
        parts = [f"First failing case: {self.case}"]
        if self.mistake and with_mistake:
            parts.append(f"  mistake   {self.mistake}")
        parts += [f"  differs   {self.where}", f"  expected  {self.expected}", f"  obtained  {self.obtained}",
                  f"  input     {self.given}"]
        return "\n".join(parts)


@dataclass
class Report:
    kata: str
    total: int = 0
    failures: list[Failure] = field(default_factory=list)
    error: str | None = None   # the code could not be graded at all (syntax, forbidden call, stopped)
    output: str = ""           # what the learner's code printed (shown, never read as a verdict)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and self.total > 0 and not self.failures

    @property
    def passed_cases(self) -> int:
        return 0 if self.error else self.total - len(self.failures)

    def lines(self) -> list[str]:
        """One line per failing case (or the one error); a single line on a pass."""
        if self.error:
            return [f"✗ {self.error}"]
        if self.passed:
            return [f"✓ {self.kata}: all {self.total} cases pass"]
        return [f.line() for f in self.failures]

    def summary(self) -> str:
        if self.error:
            return f"✗ {self.error}"
        if self.passed:
            return f"✓ All {self.total} cases pass."
        first = self.failures[0]
        head = f"✗ {len(self.failures)} of {self.total} cases fail"
        if first.mistake:
            return f"{head}: {first.mistake}.\n{first.details(with_mistake=False)}"
        return f"{head}.\n{first.details()}"


def reference(kata: Kata) -> Callable:
    """The kata's reference function, from its bundled solution.py."""
    namespace: dict = {"__name__": f"kata_solution_{kata.name}"}
    exec(compile(kata.solution, str(kata.folder / "solution.py"), "exec"), namespace)
    return namespace[kata.function]


def calling(checker, function: Callable) -> Callable:
    """``function`` as the cases call it: directly, or through the checker's adapter."""
    if checker.adapter is None:
        return function
    from minigpt.katas.fast_memory import ADAPTERS

    adapter = ADAPTERS[checker.adapter]
    return lambda *args, **kwargs: adapter(function, *args, **kwargs)


def _differs(checker, case, expected, obtained) -> str | None:
    def difference(e, o):
        return values.difference(e, o, checker.rtol, checker.atol)

    return checker.compare(case, expected, obtained, difference) if checker.compare else difference(expected, obtained)


def _given(case) -> str:
    parts = [values.show(a, limit=4) for a in case.args] + [f"{k}={values.show(v, 4)}" for k, v in case.kwargs.items()]
    return ", ".join(parts)


def _matching_mistake(checker, case, obtained, raised: str | None = None) -> str | None:
    """The first mistake that gives what the learner's code gave on ``case``: the same value, or,
    when the learner's code raised ``raised`` (an exception's type name), the same exception."""
    from minigpt.katas.checkers.base import clone

    if raised is not None and checker.adapter is not None:
        return None  # its mistakes are values and traffic, never an exception: nothing to run them for
    for mistake in checker.mistakes:
        try:
            wrong = calling(checker, mistake.function)(*clone(case.args), **clone(case.kwargs))
        except Exception as e:  # a mistake that does not apply to this input, or fails like the learner's
            if raised is not None and type(e).__name__ == raised:
                return mistake.message
            continue
        if raised is not None:
            continue
        if wrong is None:
            continue
        if checker.same is not None:
            if checker.same(wrong, obtained, lambda e, o: values.difference(e, o, checker.rtol, checker.atol)):
                return mistake.message
        elif values.difference(wrong, obtained, checker.rtol, checker.atol) is None:
            return mistake.message
    return None


def judge(kata: Kata, outcomes: list, forbidden_calls: list[str] | None = None) -> Report:
    """The report for ``outcomes`` (per case, ``("value", v)`` or ``("error", text)``)."""
    from minigpt.katas.checkers import checker as checker_for
    from minigpt.katas.checkers.base import clone

    checker = checker_for(kata.name)
    cases = checker.cases()
    report = Report(kata.name, total=len(cases))
    if forbidden_calls:
        report.error = f"your code called {forbidden_calls[0]}, the function this kata asks you to write yourself"
        return report
    if len(outcomes) != len(cases):
        report.error = f"the grader got results for {len(outcomes)} of {len(cases)} cases"
        return report
    solve = calling(checker, reference(kata))
    for case, (kind, got) in zip(cases, outcomes):
        expected = solve(*clone(case.args), **clone(case.kwargs))
        if kind == "error":
            mistake = _matching_mistake(checker, case, None, raised=got.partition(":")[0])
            report.failures.append(Failure(case.label, _given(case), values.show(expected), "an exception", got, mistake))
            continue
        gap = _differs(checker, case, expected, got)
        if gap:
            # a kata run through an adapter costs a simulated run per mistake: named on its first failure
            mistake = None if checker.adapter and report.failures else _matching_mistake(checker, case, got)
            report.failures.append(Failure(case.label, _given(case), values.show(expected), values.show(got), gap, mistake))
    return report


def call_cases(kata: Kata, function: Callable) -> tuple[list, list[str]]:
    """Run ``function`` on every case with the kata's operators banned at torch's dispatcher and its
    forbidden names replaced: (outcomes, forbidden calls). (The bounded runner's harness does the
    same in its own process, from the cases it is sent.)"""
    from minigpt.katas.ban import Ban, banned_ops
    from minigpt.katas.checkers import checker as checker_for
    from minigpt.katas.checkers.base import clone

    outcomes, calls = [], []
    checker = checker_for(kata.name)
    cases, function = checker.cases(), calling(checker, function)
    with Ban(banned_ops(kata.forbidden), calls):
        for case in cases:
            args, kwargs = clone(case.args), clone(case.kwargs)
            try:
                with guard(kata.forbidden, calls):
                    outcomes.append(("value", function(*args, **kwargs)))
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # SystemExit included: exiting is not an answer
                outcomes.append(("error", f"{type(e).__name__}: {e}".strip()[:300]))
    return outcomes, calls


def load_function(kata: Kata, source: str, filename: str = "<your code>") -> Callable:
    """Check ``source`` (syntax, forbidden calls, the function present), run it, return the function."""
    check_source(source, kata.forbidden, kata.function)
    namespace: dict = {"__name__": "kata_attempt"}
    try:
        exec(compile(source, filename, "exec"), namespace)
    except Exception as e:
        raise KataCodeError(f"your code failed while loading: {type(e).__name__}: {e}") from None
    function = namespace.get(kata.function)
    if not callable(function):
        raise KataCodeError(f"no function called {kata.function}() in your code")
    return function


def grade_function(kata: Kata, source: str) -> Report:
    """Grade ``source`` in this process (tests and trusted code only: nothing bounds it)."""
    try:
        function = load_function(kata, source)
    except KataCodeError as e:
        return Report(kata.name, error=str(e))
    outcomes, calls = call_cases(kata, function)
    return judge(kata, outcomes, calls)
