"""Train the bundled induction-head model (checkpoints/induction) with the training form's
"induction" preset, the run a learner starts from the Training area, and copy its checkpoint.

    python scripts/make_induction_checkpoint.py          # under a minute on a laptop's CPU

The lesson "Induction heads" and tests/test_induction.py read the result; rerun this script (and
those tests) when the model, the data generator or the preset changes.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minigpt.control.form import preset_config  # noqa: E402
from minigpt.training.loop import train  # noqa: E402


def main() -> None:
    cfg = preset_config("induction")
    with tempfile.TemporaryDirectory() as tmp:
        status = train(cfg, Path(tmp) / "run", name="induction heads")
        print(f"val {status['val_loss']:.4f}  test {status['test_loss']:.4f}")
        target = ROOT / "checkpoints" / "induction"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        for name in ("config.json", "model.safetensors"):  # the model only: no optimizer state
            shutil.copy2(Path(tmp) / "run" / "checkpoint" / name, target / name)
    print(f"written {target}")


if __name__ == "__main__":
    main()
