"""The header of a safetensors file, read and checked without reading its tensors.

A safetensors file starts with 8 bytes (the header's length, little-endian) and a JSON header
naming each tensor with its dtype, shape and byte range. Reading only that much tells a loader
what a file holds before it allocates anything: a weights file cannot make the tutor build a
model larger than the tensors it really contains, and ``check_shapes`` compares them with the
model a config describes. Torch-free.
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path

from minigpt import guarded
from minigpt.errors import CheckpointError, UnsafeFileError

MAX_HEADER_BYTES = 16 << 20
FLOAT_DTYPES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}  # bytes per element


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def read_header(weights_file: Path) -> dict:
    """The JSON header of a safetensors file (names, dtypes, shapes), checked against its size."""
    try:  # a regular file under the limit, opened without blocking (a FIFO would never answer)
        with guarded.open_file(weights_file, guarded.WEIGHTS_BYTES) as f:
            size = os.fstat(f.fileno()).st_size
            raw = f.read(8)
            n = struct.unpack("<Q", raw)[0] if len(raw) == 8 else -1
            if not 0 < n <= min(size - 8, MAX_HEADER_BYTES):
                raise CheckpointError(f"{weights_file}: not a safetensors file (bad header length)")
            header = json.loads(f.read(n))
    except CheckpointError:
        raise
    except UnsafeFileError as e:
        raise CheckpointError(f"{weights_file}: {e.strerror}") from None
    except IsADirectoryError:
        raise CheckpointError(f"{weights_file}: a folder where a file should be") from None
    except FileNotFoundError:
        raise CheckpointError(f"{weights_file.parent}: {weights_file.name} is missing") from None
    except OSError as e:
        raise CheckpointError(f"{weights_file}: cannot be read ({e.strerror or e})") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CheckpointError(f"{weights_file}: not a safetensors file (damaged header)") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{weights_file}: not a safetensors file (damaged header)")
    header.pop("__metadata__", None)
    for name, entry in header.items():
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if (not isinstance(shape, list) or not all(_whole(d) for d in shape)
                or entry.get("dtype") not in FLOAT_DTYPES or not isinstance(offsets, list) or len(offsets) != 2
                or not all(_whole(o) for o in offsets)
                or offsets[1] - offsets[0] != math.prod(shape) * FLOAT_DTYPES[entry["dtype"]]
                or offsets[1] > size - 8 - n):
            raise CheckpointError(f"{weights_file}: tensor {name!r:.40} has a damaged entry in the header")
    return header


def check_shapes(weights_file: Path, expected: dict[str, tuple[int, ...]]) -> None:
    """The file holds exactly the tensors ``expected`` names, each of the expected shape."""
    header = read_header(weights_file)
    missing, extra = sorted(set(expected) - set(header)), sorted(set(header) - set(expected))
    if missing or extra:
        what = f"missing {', '.join(missing[:3])}" if missing else f"unexpected {', '.join(extra[:3])}"
        raise CheckpointError(f"{weights_file}: weights do not fit the model in config.json ({what})")
    for name, shape in expected.items():
        if tuple(header[name]["shape"]) != shape:
            raise CheckpointError(f"{weights_file}: {name} has shape {tuple(header[name]['shape'])} but the model "
                                  f"in config.json needs {shape}")
