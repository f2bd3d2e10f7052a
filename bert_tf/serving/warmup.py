"""TF Serving's warm-up file: requests it replays through a SavedModel as it loads it, before
the model takes traffic, so that the first real requests do not pay for building the kernels
of their shapes (tensorflow/serving's SavedModel warm-up: assets.extra/tf_serving_warmup_requests,
a TFRecord file of PredictionLog protos).

    requests = warmup_requests(("text_a", "text_b"), MODEL_INPUTS, (None, None), 128)
    write_warmup_requests(export_dir, requests)

Every export (serving.export.export_model) writes one: each signature asked at a short, a
middle and the longest sequence.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
# A sentence of ordinary words (most are one WordPiece in any English vocab), repeated to make
# the texts of the requests; what it says does not matter, only how many tokens it makes.
WARMUP_SENTENCE = "the model reads this sentence once before it answers any request . "
# The requests' sequence lengths, as fractions of max_seq_length: oneDNN builds its kernels per
# shape, and a request's shape is its padded length.
LENGTHS = (1 / 8, 1 / 2, 1.0)


def warmup_requests(
    text_names: tuple[str, ...], ids_names: tuple[str, ...], ids_shape: tuple, max_seq_length: int
) -> list[tuple[str, dict[str, np.ndarray]]]:
    """[(signature, {input: value})]: the raw-text signature (`serving_default`, string inputs
    `text_names`) and the ids signature (`serve`, int32 inputs `ids_names` of `ids_shape`, a
    batch of one, None the length), each at every length of LENGTHS: [PAD] ids, a mask of 1s."""
    requests = []
    for fraction in LENGTHS:
        words = max(1, int(max_seq_length * fraction))
        text = " ".join((WARMUP_SENTENCE * (words // 10 + 1)).split()[:words])
        requests.append(
            ("serving_default", {name: np.array([text.encode()], object) for name in text_names})
        )
    for fraction in LENGTHS:
        length = max(2, int(max_seq_length * fraction))
        shape = tuple(1 if i == 0 else length if d is None else d for i, d in enumerate(ids_shape))
        ids = {name: np.zeros(shape, np.int32) for name in ids_names}
        ids["input_mask"][:] = 1
        requests.append(("serve", ids))
    return requests


def write_warmup_requests(export_dir: str, requests: list) -> str:
    """Writes `requests` ([(signature, {input: value})]) as `export_dir`'s WARMUP_FILE;
    returns its path."""
    path = os.path.join(export_dir, WARMUP_FILE)
    with tf.io.TFRecordWriter(path) as writer:
        for signature, inputs in requests:
            writer.write(prediction_log(signature, inputs))
    return path


def prediction_log(signature: str, inputs: dict[str, np.ndarray]) -> bytes:
    """A serialized tensorflow.serving.PredictionLog holding a PredictLog whose PredictRequest
    asks `signature` with `inputs`. Written field by field (protobuf's wire format) rather than
    through tensorflow-serving-api, whose protos would make it, and grpcio, a dependency of
    every export; the tests read it back with that package's PredictionLog."""
    model_spec = _field(3, signature.encode())  # ModelSpec.signature_name = 3
    request = _field(1, model_spec)  # PredictRequest.model_spec = 1
    for name, value in inputs.items():
        tensor = tf.make_tensor_proto(value).SerializeToString()
        request += _field(2, _field(1, name.encode()) + _field(2, tensor))  # inputs map = 2
    return _field(6, _field(1, request))  # PredictionLog.predict_log = 6, PredictLog.request = 1


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: its tag (number, wire type 2), its length, the payload."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)
