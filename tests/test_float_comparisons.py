"""No test compares floats from two computations exactly (issue 56).

An AST scan of tests/ for the comparisons that pass on one machine and fail on another: ==, >=
or <= between two computed floats (log-probabilities, losses, logits, .item() results),
torch.equal between two computed tensors, and tolerances tighter than float32 can hold. Results
of two paths are compared with the named tolerances of tests/helpers/floats.py instead. Where
exact equality is the point (the same computation twice, a round trip, float64 maths) the test
is named in ALLOWED with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers.floats import FLOAT32_EPS

TESTS = Path(__file__).resolve().parent

# A value with one of these names is a float some computation produced.
FLOAT_NAME = re.compile(r"logprob|log_prob|loss|logit|perplexity|nll", re.IGNORECASE)
# (call name, default tolerances) for the closeness checks whose defaults are known.
DEFAULTS = {"allclose": {"rtol": 1e-5, "atol": 1e-8}, "isclose": {"rel_tol": 1e-9, "abs_tol": 0.0}}

# (file under tests/, test function) -> why its exact comparison or tight tolerance is right.
ALLOWED = {
    ("test_pretrained_gpt2.py", "test_the_hub_layout_with_its_mask_buffers_loads_the_same_model"):
        "the same tensors read from two key layouts of one file make the same model: bit for bit is the claim",
    ("test_pretrained_gpt2.py", "test_the_positions_and_nearest_tokens_read_the_gpt2_embeddings"):
        "the position table is wpe read from the file: a round trip keeps every bit",
    ("test_train.py", "test_same_seed_reproducible"):
        "the same training run twice in one process: bit-for-bit determinism is the claim",
    ("test_teaching_shipped.py", "test_the_shipped_model_is_read_from_the_checkpoint"):
        "both sides are the same number read from the checkpoint's metrics",
    ("test_explain.py", "test_export_markdown_and_csv_round_trip"):
        "a number written to CSV and read back: the round trip keeps every digit",
    ("test_gqa.py", "test_n_kv_heads_equal_to_n_heads_is_plain_attention_bit_for_bit"):
        "n_kv_heads = n_heads must take the same kernels on the same shapes: bit for bit is the claim",
    ("test_checkpoint.py", "same_outputs"):
        "a model and its copy loaded from a checkpoint run the same computation on the same weights",
    ("test_models_lora.py", "test_an_adapter_starts_as_the_base_layer"):
        "B = 0 adds exact zeros to the same base matmul: the output is the base layer's, bit for bit",
    ("test_muon.py", "test_muon_state_survives_a_checkpoint"):
        "optimizer state saved and loaded: a round trip keeps every bit",
    ("test_stats.py", "test_incomplete_beta_closed_forms"):
        "float64 series against closed forms: 1e-10 is still a million float64 roundings",
    ("test_study_templates.py", "test_every_draw_has_a_clean_answer"):
        "float64 formulas computed two ways: 1e-9 relative is still ten million float64 roundings",
    ("test_study_numeric.py", "test_fractions_read_as_their_value"):
        "float64 parsing of p/q against Fraction(p, q): one float64 rounding each, far inside 1e-12",
    ("test_number_formats.py", "test_rounding_matches_torchs_float8_cast_including_ties"):
        "both pick one of the format's 253 or 247 exact values: the same number or a wrong one",
    ("test_number_formats.py", "test_gptq_with_uncorrelated_inputs_is_round_to_nearest"):
        "a diagonal Hessian makes every error update an exact zero: the same float64 rounding twice",
}


def _name(node: ast.AST) -> str:
    """The last name in a call's function: torch.testing.assert_close -> assert_close."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_computed_float(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute | ast.Name):
        return bool(FLOAT_NAME.search(_name(node)))
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return bool(FLOAT_NAME.search(key.value))
        return _is_computed_float(node.value)
    if isinstance(node, ast.Call):
        if _name(node.func) == "item" or FLOAT_NAME.search(_name(node.func)):
            return True
        return _name(node.func) == "float" and bool(node.args) and not isinstance(node.args[0], ast.Constant)
    return False


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _tolerances(call: ast.Call) -> dict[str, float] | None:
    """The tolerances a closeness check uses, or None when one is not a literal (a named tolerance)."""
    name = _name(call.func)
    given = {}
    for kw in call.keywords:
        if kw.arg in ("rtol", "atol", "rel_tol", "abs_tol", "rel", "abs"):
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int | float)):
                return None
            given[kw.arg] = float(kw.value.value)
    if name == "approx":
        if "abs" in given and "rel" not in given:
            return given  # pytest: an abs alone switches the relative tolerance off
        return {"rel": 1e-6, "abs": 1e-12} | given
    if name == "assert_close":
        return given if {"rtol", "atol"} <= set(given) else None  # else torch's float32 defaults
    return DEFAULTS.get(name, {}) | given if name in DEFAULTS else None


def findings(source: str) -> list[tuple[str, int, str]]:
    """(enclosing function, line, what is wrong) for every exact or too tight float comparison."""
    tree = ast.parse(source)
    out = []
    negated = {id(n.operand) for n in ast.walk(tree) if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                for op, left, right in zip(node.ops, sides, sides[1:]):
                    if isinstance(op, ast.Eq | ast.GtE | ast.LtE) and _is_computed_float(left) \
                            and _is_computed_float(right):
                        out.append((func.name, node.lineno, "exact comparison of two computed floats"))
            elif isinstance(node, ast.Call):
                name = _name(node.func)
                if name == "equal" and id(node) not in negated and len(node.args) == 2 \
                        and all(_has_call(a) for a in node.args):
                    out.append((func.name, node.lineno, "torch.equal of two computed tensors"))
                tolerances = _tolerances(node) if name in ("allclose", "isclose", "approx", "assert_close") else None
                if tolerances is not None and max(tolerances.values()) < FLOAT32_EPS:
                    out.append((func.name, node.lineno, f"tolerance {tolerances} is tighter than float32"))
    return out


def _scan() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        for func, line, what in findings(path.read_text()):
            found.setdefault((rel, func), []).append(f"{rel}:{line} in {func}: {what}")
    return found


def test_no_test_compares_two_computed_floats_exactly():
    found = _scan()
    unexplained = [msg for key, msgs in found.items() if key not in ALLOWED for msg in msgs]
    assert not unexplained, ("use a tolerance from tests/helpers/floats.py, or name the test in ALLOWED "
                             "with the reason exact equality is the point:\n" + "\n".join(unexplained))
    assert not set(ALLOWED) - set(found), "ALLOWED names tests that no longer compare exactly"


@pytest.mark.parametrize("line", [
    "assert raw[0].logprob >= greedy_name(model, vocab).logprob",
    "assert a['val_loss'] == b['val_loss']",
    "assert x.item() == y.item()",
    "assert torch.equal(model(idx)[0], other(idx)[0])",
    "assert torch.allclose(a, b, atol=1e-9, rtol=0)",
    "assert math.isclose(a, b)",
    "assert a == pytest.approx(b, abs=1e-12)",
    "torch.testing.assert_close(a, b, rtol=0, atol=0)",
])
def test_the_scan_flags_what_broke_on_another_machine(line):
    assert findings(f"def test_x():\n    {line}\n")


@pytest.mark.parametrize("line", [
    "assert raw[0].ids == greedy.ids or raw[0].logprob >= greedy.logprob - LOGPROB_ATOL",
    "assert logits.shape == (2, 5, 11) and loss is None",
    "assert loss.item() < 5 and float(loss) == 2.0",
    "assert not torch.equal(model(a), model(b))",
    "assert torch.equal(rows, repeat_rows(200, seed=5)[0])",
    "assert torch.allclose(a, b, atol=1e-6)",
    "assert math.isclose(a, b, abs_tol=LOGPROB_ATOL)",
    "assert a == pytest.approx(b)",
    "torch.testing.assert_close(a, b)",
])
def test_the_scan_leaves_exact_comparisons_of_ids_shapes_and_constants_alone(line):
    assert not findings(f"def test_x():\n    {line}\n")
