"""Experiment specs: budgets worked by hand, run names, presets, grids written as text or TOML."""

from __future__ import annotations

import pytest

from minigpt.errors import ConfigError
from minigpt.experiments import folder, presets
from minigpt.experiments.spec import Axis, Budget, ExperimentSpec, data_info, plan_runs, spec_data_info, steps_for_compute, value_text

# 20 four-letter words over a, b, c, d: vocabulary 5 (with "."), block 5, every name 5 positions.
WORDS = ["abcd", "bcda", "cdab", "dabc", "aabb", "bbcc", "ccdd", "ddaa", "abab", "cdcd",
         "acbd", "bdac", "adcb", "cbda", "dcba", "badc", "aacc", "bbdd", "abdc", "dacb"]


@pytest.fixture
def four_letter_data(tmp_path):
    path = tmp_path / "four.txt"
    path.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    return path


def test_data_info_counts_positions_per_name():
    info = data_info(WORDS)
    assert (info.vocab_size, info.block_size, info.mean_tokens, info.n_train) == (5, 5, 5.0, 16)


def test_compute_budget_gives_bigger_models_fewer_steps_worked_by_hand():
    # d=16, 1 layer, V=5, T=5: token 5·16=80, positions 5·16=80, attention 4·16²+4·16=1088,
    # FFN 8·16²+5·16=2128, block norms 4·16=64, final norm 2·16=32, head 16·5=80 → 3,552.
    # d=32: 160 + 160 + 4,224 + 8,352 + 128 + 64 + 160 = 13,248.
    # Batch 10 names × 5 positions = 50 tokens a step. C = 6 · 3,552 · 50 · 100 = 106,560,000
    # → d=16 takes 100 steps; d=32 takes 106,560,000 / (6 · 13,248 · 50) = 26.8 → 27 steps.
    spec = ExperimentSpec(name="c", axes=[Axis("d_model", (16, 32))], budget=Budget("compute", 106_560_000),
                          base={"n_heads": 2, "n_layers": 1, "batch_size": 10}, kind="size")
    plan = plan_runs(spec, data_info(WORDS))
    assert [r.n_params for r in plan] == [3552, 13248]
    assert [r.tokens_per_step for r in plan] == [50.0, 50.0]
    assert [r.steps for r in plan] == [100, 27]
    assert [r.config["steps"] for r in plan] == [100, 27]
    assert plan[0].flops == 106_560_000
    assert steps_for_compute(1, 10**6, 100) == 1  # never zero steps


def test_planned_parameter_counts_are_the_models_own(four_letter_data):
    from minigpt.models.build import build_model, count_parameters
    from minigpt.training.options import TrainConfig

    spec = ExperimentSpec(name="p", axes=[Axis("pos_encoding", ("learned", "rope")), Axis("tie_weights", (False, True))],
                          budget=Budget("steps", 5), base={"d_model": 16, "n_heads": 2, "n_layers": 2})
    info = data_info(WORDS)
    for run in plan_runs(spec, info):
        cfg = TrainConfig.from_dict(run.config)
        model = build_model("gpt", cfg.model_config(info.vocab_size, info.block_size))
        assert run.n_params == count_parameters(model), run.name


def test_steps_and_time_budgets_and_eval_interval():
    info = data_info(WORDS)
    steps = plan_runs(ExperimentSpec(name="s", axes=[Axis("lr", (1e-3, 2e-2))], budget=Budget("steps", 600)), info)
    assert [r.steps for r in steps] == [600, 600] and steps[0].config["eval_interval"] == 50  # 12 evaluations
    timed = plan_runs(ExperimentSpec(name="t", axes=[Axis("lr", (1e-3,))], budget=Budget("time", 30)), info)
    assert timed[0].steps is None and timed[0].config["time_s"] == 30.0 and timed[0].flops is None


def test_run_names_say_the_experiment_and_axis_values():
    spec = ExperimentSpec(name="grid", axes=[Axis("d_model", (8, 16)), Axis("lr", (0.001, 0.02))],
                          budget=Budget("steps", 10), base={"n_heads": 2})
    names = [r.name for r in plan_runs(spec, data_info(WORDS))]
    assert names == ["grid-d8-lr1e-3", "grid-d8-lr2e-2", "grid-d16-lr1e-3", "grid-d16-lr2e-2"]
    assert value_text(0.0) == "0" and value_text(5e-3) == "5e-3" and value_text("rope") == "rope"
    spec = ExperimentSpec(name="pos", axes=[Axis("pos_encoding", ("learned", "rope")), Axis("tie_weights", (True,))],
                          budget=Budget("steps", 10), base={"d_model": 16, "n_heads": 2})
    assert [r.name for r in plan_runs(spec, data_info(WORDS))] == ["pos-learned-tie_weights=True",
                                                                    "pos-rope-tie_weights=True"]


def test_derived_shapes_follow_the_course():
    # Exercise 2's table, then exercise 6's rule heads = layers = max(d/16, 2); wider → smaller lr.
    info = data_info(WORDS)
    plan = plan_runs(presets.preset_spec("model_size"), info)
    shapes = [(r.config["d_model"], r.config["n_heads"], r.config["n_layers"]) for r in plan]
    assert shapes == [(32, 2, 2), (64, 4, 4), (128, 4, 6), (256, 8, 8)]
    assert [r.config["lr"] for r in plan] == [5e-3, 5e-3, 2.5e-3, 1.25e-3]
    scaling = plan_runs(presets.preset_spec("scaling_law"), info)
    assert [(r.config["n_heads"], r.config["n_layers"]) for r in scaling] == [(2, 2), (2, 2), (4, 4), (8, 8), (16, 16)]


@pytest.mark.parametrize("name", presets.preset_names())
def test_every_preset_plans_on_the_embedded_names(name):
    from minigpt.data import load_words

    spec = presets.preset_spec(name)
    plan = plan_runs(spec, spec_data_info(spec, words=list(load_words())))
    assert len(plan) == spec.n_runs >= 3
    assert len({r.name for r in plan}) == len(plan)


def test_grid_text_and_axis_parsing():
    grid = presets.parse_grid_text("d_model=16,32 dropout=0,0.1 steps=500 n_layers=1 pack=off")
    assert [(a.name, a.values) for a in grid.axes] == [("d_model", (16, 32)), ("dropout", (0.0, 0.1))]
    assert grid.base == {"n_layers": 1, "pack": False} and grid.budget == Budget("steps", 500)
    spec = presets.custom_spec("mine", grid.axes, grid.budget, grid.base)
    assert spec.kind == "size" and spec.derive is None  # layers fixed by hand: nothing derived
    assert presets.custom_spec("m", [Axis("d_model", (16, 32))], Budget("steps", 5)).derive == "scaling"


@pytest.mark.parametrize("text, words", [
    ("d_model=16,x steps=5", "whole number"),
    ("colour=1,2 steps=5", "not a training option"),
    ("d_model steps=5", "option=value"),
    ("steps=5 n_layers=1", "at least one option with several values"),
    ("lr=0.1,0.1 steps=5", "repeated"),
])
def test_bad_grid_text_gets_one_clear_message(text, words):
    with pytest.raises(ConfigError, match=words):
        presets.parse_grid_text(text)


def test_toml_grid_and_its_errors(tmp_path):
    from minigpt.experiments.spec import load_spec_file

    good = tmp_path / "grid.toml"
    good.write_text('kind = "dropout"\n[base]\nd_model = 16\nn_heads = 2\n[axes]\ndropout = [0.0, 0.2]\n'
                    '[budget]\nsteps = 40\n', encoding="utf-8")
    spec = load_spec_file(good)
    assert (spec.name, spec.kind, spec.n_runs, spec.budget) == ("grid", "dropout", 2, Budget("steps", 40))
    bad = tmp_path / "bad.toml"
    bad.write_text("[axes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_spec_file(bad)
    bad.write_text('[axes]\nd_model = [16]\n[budget]\nsteps = 5\ntime = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="exactly one"):
        load_spec_file(bad)
    with pytest.raises(ConfigError, match="no such file"):
        load_spec_file(tmp_path / "missing.toml")


def test_an_impossible_grid_point_fails_before_any_folder_is_written(tmp_path):
    spec = ExperimentSpec(name="bad", axes=[Axis("d_model", (16, 30))], budget=Budget("steps", 5),
                          base={"n_heads": 4})
    with pytest.raises(ConfigError, match="d_model=30.*divisible"):
        folder.create_experiment(spec, root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_positions_preset_trains_on_short_names_and_keeps_the_long_ones(tmp_path):
    words = ["ab", "abc", "abcd", "bcdab", "abcdabcd", "dcbadcba", "abcdabcdab", "bacd", "cab", "dab"]
    data = tmp_path / "w.txt"
    data.write_text("\n".join(words), encoding="utf-8")
    spec = ExperimentSpec(name="pos", axes=[Axis("pos_encoding", ("learned", "rope"))], budget=Budget("steps", 5),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1}, kind="positions", length_split=5)
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=str(data))
    short = (exp.dir / folder.SHORT_DATA).read_text().split()
    assert max(map(len, short)) <= 5 and exp.long_data.read_text().split() == ["abcdabcd", "dcbadcba", "abcdabcdab"]
    # Positions exist for the longest name (10 letters + 1), though training never reaches them.
    assert {r.config["block_size"] for r in exp.runs} == {11}
    assert {r.config["data"] for r in exp.runs} == {str(exp.dir / folder.SHORT_DATA)}


def test_a_sweep_plans_and_writes_runs_on_generated_rows_and_on_a_text(tmp_path):
    """Not only names: the plan counts a window's every position (repeats read no file)."""
    spec = presets.preset_spec("induction")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=str(tmp_path / "ignored.txt"))
    assert exp.info.vocab_size == 27 and exp.info.mean_tokens == 32.0
    assert [r.config["n_layers"] for r in exp.runs] == [1, 2, 3]
    assert {r.config["data_format"] for r in exp.runs} == {"repeats"} and {r.config["data"] for r in exp.runs} == {"embedded"}
    assert {r.tokens_per_step for r in exp.runs} == {32 * 32.0}
    book = tmp_path / "book.txt"
    book.write_text("the cat sat on the mat. " * 40, encoding="utf-8")
    text = ExperimentSpec(name="txt", axes=[Axis("lr", (1e-3, 2e-3, 5e-3))], budget=Budget("steps", 5),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1, "data_format": "text", "block_size": 8})
    made = folder.create_experiment(text, root=tmp_path / "runs", data=str(book))
    assert made.info.vocab_size == len(set(book.read_text()) | {"."}) and made.info.mean_tokens == 8.0
    assert made.info.n_train == int(0.9 * len(book.read_text())) - 8
    assert {r.config["data"] for r in made.runs} == {str(book.resolve())}


def test_a_sweep_over_data_formats_or_a_length_split_on_windows_is_refused(tmp_path):
    over = ExperimentSpec(name="f", axes=[Axis("data_format", ("lines", "repeats"))], budget=Budget("steps", 5))
    with pytest.raises(ConfigError, match="one per experiment"):
        folder.create_experiment(over, root=tmp_path)
    split = ExperimentSpec(name="p", axes=[Axis("lr", (1e-3,))], budget=Budget("steps", 5), length_split=4,
                           base={"data_format": "repeats"})
    with pytest.raises(ConfigError, match="length_split.*lines"):
        folder.create_experiment(split, root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_induction_sweep_is_the_training_forms_induction_recipe_at_each_depth():
    from minigpt.control.form import PRESETS as FORM_PRESETS

    swept = presets.preset_spec("induction")
    form = dict(FORM_PRESETS["induction"])
    assert {**swept.base, "n_layers": form["n_layers"], "steps": int(swept.budget.value)} == form
    assert form["n_layers"] in swept.axes[0].values
