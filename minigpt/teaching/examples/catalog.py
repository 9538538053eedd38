"""Every worked example, registered: import this module (not the topic modules) to render one.

Each topic module registers its examples into ``registry.EXAMPLES`` when imported; adding a topic
means adding a module here and naming it below.
"""

from __future__ import annotations

from minigpt.teaching.examples import (  # noqa: F401  (each registers its examples)  # noqa: F401  (the lessons beyond the course)
    alignment,
    attention,
    averaging,
    compression,
    decoding,
    decoding_frontier,
    evaluation,
    flash_io,
    induction,
    inference,
    initialization,
    kv_memory,
    long_context,
    long_context_scale,
    loss,
    model,
    moe,
    number_formats,
    parallelism,
    precision,
    pretrained,
    reasoning,
    scale,
    search,
    serving,
    serving_systems,
    system_design,
    tokenization,
    training_scale,
)
from minigpt.teaching.examples.registry import EXAMPLES, example_ids, render_example  # noqa: F401
