"""TFRecord files of tf.train.Example records, written without importing TensorFlow.

Why our own: importing TensorFlow costs ~2 s and ~550 MB of memory, which is most of what the
data generator (and each of its worker processes) would otherwise spend. The format is small:
each record is `length (uint64 LE), masked_crc32c(length), data, masked_crc32c(data)`, and a
tf.train.Example is a three-level protobuf that we encode directly. tests/test_tfrecord.py checks
the bytes against TensorFlow's own writer and parser.
"""

from __future__ import annotations

import dataclasses
import math
import mmap
import struct
from collections.abc import Iterable, Sequence
from typing import BinaryIO

import numpy as np

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_open


def _crc32c_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):  # CRC-32C (Castagnoli), reflected polynomial 0x82F63B78
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78), table >> 1)
    return table.astype(np.uint32)


_CRC_TABLE = _crc32c_table()


def masked_crc32c(buffers: Sequence[bytes]) -> np.ndarray:
    """TFRecord's masked CRC-32C of each buffer, computed for all buffers at once.

    A CRC is sequential within a buffer but independent across buffers, so the loop runs over
    byte positions and each step updates every buffer still that long (sorted longest first,
    those are a prefix).
    """
    count = len(buffers)
    lengths = np.fromiter((len(b) for b in buffers), np.int64, count)
    order = np.argsort(-lengths, kind="stable")
    sorted_lengths = lengths[order]
    width = int(sorted_lengths[0]) if count else 0
    data = np.zeros((width, count), np.uint8)  # byte position major: each step reads a row
    for column, index in enumerate(order):
        data[: lengths[index], column] = np.frombuffer(buffers[index], np.uint8)
    # active[pos] = how many buffers are longer than pos
    active = np.searchsorted(-sorted_lengths, -np.arange(width), side="left")
    crc = np.full(count, 0xFFFFFFFF, np.uint32)
    table = _CRC_TABLE
    for pos in range(width):
        k = active[pos]
        head = crc[:k]
        crc[:k] = table[(head ^ data[pos, :k]) & 0xFF] ^ (head >> 8)
    crc ^= np.uint32(0xFFFFFFFF)
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(0xA282EAD8)
    result = np.empty(count, np.uint32)
    result[order] = masked
    return result


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINTS = [_varint(i) for i in range(1 << 16)]


def _varints(values: Sequence[int]) -> bytes:
    small = _SMALL_VARINTS
    return b"".join(small[v] if 0 <= v < 65536 else _varint(v & 0xFFFFFFFFFFFFFFFF) for v in values)


def _field(tag: bytes, payload: bytes) -> bytes:
    return tag + _varint(len(payload)) + payload


def encode_example(int64_features: dict[str, Sequence[int]], float_features: dict) -> bytes:
    """A serialized tf.train.Example with the given Int64List and FloatList features."""
    entries = []
    for name, values in int64_features.items():
        feature = _field(b"\x1a", _field(b"\x0a", _varints(values)))  # Feature.int64_list
        entries.append(_field(b"\x0a", _field(b"\x0a", name.encode()) + _field(b"\x12", feature)))
    for name, values in float_features.items():
        packed = np.asarray(values, "<f4").tobytes()
        feature = _field(b"\x12", _field(b"\x0a", packed))  # Feature.float_list
        entries.append(_field(b"\x0a", _field(b"\x0a", name.encode()) + _field(b"\x12", feature)))
    return _field(b"\x0a", b"".join(entries))  # Example.features


# The model inputs every task's records hold, in the order the original writes them.
MODEL_INPUTS = ("input_ids", "input_mask", "segment_ids")


def int64_features(names, shape: tuple[int, ...]) -> dict[str, tuple[tuple[int, ...], str]]:
    """A `RecordSchema`'s entries for int64 features of one shape."""
    return {name: (tuple(shape), "int64") for name in names}


@dataclasses.dataclass(frozen=True)
class RecordSchema:
    """A kind of record, declared once: each feature's name -> (shape, dtype: "int64" or
    "float32"), in the order they are written. Encoding a record, the padding record and the
    parsing spec all follow from it.

        schema = RecordSchema({"input_ids": ((128,), "int64"), "label_ids": ((), "int64")})
        schema.encode({"input_ids": ids, "label_ids": 1})
    """

    features: dict[str, tuple[tuple[int, ...], str]]

    def encode(self, values: dict) -> bytes:
        """The tf.train.Example of `values` (name -> a number, or nested lists of `shape`)."""
        ints, floats = {}, {}
        for name, (shape, dtype) in self.features.items():
            value = values[name]
            if not shape:
                value = [value]
            elif len(shape) > 1:
                value = [item for row in value for item in row]  # row-major, as parsing reads
            if dtype == "float32":
                floats[name] = value
            else:
                ints[name] = [int(item) for item in value] if not shape else value
        return encode_example(ints, floats)

    def padding(self) -> bytes:
        """The all-zero record that fills the last eval/predict batch (not a real example)."""
        return encode_example(
            {n: [0] * math.prod(s) for n, (s, dtype) in self.features.items() if dtype == "int64"},
            {n: [0.0] * math.prod(s) for n, (s, d) in self.features.items() if d == "float32"},
        )

    def spec(self) -> dict:
        """The `tf.io.FixedLenFeature` of each feature, to parse the records back."""
        import tensorflow as tf  # only to read records: writing them needs no TensorFlow

        dtypes = {"int64": tf.int64, "float32": tf.float32}
        return {
            name: tf.io.FixedLenFeature(list(shape), dtypes[dtype])
            for name, (shape, dtype) in self.features.items()
        }


class TFRecordWriter:
    """Writes records to an open binary file; CRCs are computed a batch at a time.

    Usage: `with open(path, "wb") as f: writer = TFRecordWriter(f); writer.write(r); ...;
    writer.flush()`.
    """

    def __init__(self, file: BinaryIO, batch_size: int = 1024) -> None:
        self.file = file
        self.batch_size = batch_size
        self.pending: list[bytes] = []

    def write(self, record: bytes) -> None:
        self.pending.append(record)
        if len(self.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        headers = [struct.pack("<Q", len(r)) for r in self.pending]
        header_crcs = masked_crc32c(headers)
        data_crcs = masked_crc32c(self.pending)
        parts = []
        for header, header_crc, record, data_crc in zip(
            headers, header_crcs, self.pending, data_crcs, strict=True
        ):
            parts += [header, struct.pack("<I", header_crc), record, struct.pack("<I", data_crc)]
        self.file.write(b"".join(parts))
        self.pending = []


def write_records(
    path: str,
    records: Iterable[bytes],
    padding: bytes | None = None,
    pad_to_multiple_of: int = 1,
) -> int:
    """Writes a TFRecord file of the records, then copies of `padding` up to a multiple of
    `pad_to_multiple_of` (a batch size: every batch then has the same shape). Written under a
    temporary name, then renamed: a file under `path` is whole. Returns the number of records
    before the padding."""
    count = 0
    with atomic_open(path, "wb") as f:
        writer = TFRecordWriter(f)
        for record in records:
            writer.write(record)
            count += 1
        if padding is not None:
            for _ in range(-count % pad_to_multiple_of):
                writer.write(padding)
        writer.flush()
    return count


def count_complete_records(path: str) -> int:
    """Walks the records' length headers (no data read, CRCs not checked: about 1 us per
    record); returns how many records the file holds, or raises `InputError` naming the file
    where one is cut short: a copy or a write that did not finish, found before training
    rather than at that record."""
    size = filesystem.getsize(path)
    if not size:
        return 0
    with filesystem.open_file(path, "rb") as f:
        if filesystem.is_url(path):  # no mmap there: a seek and a header read per record
            return _count_records(path, size, _header_reader(f))
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _count_records(path, size, lambda offset: _LENGTH.unpack_from(data, offset)[0])


def _header_reader(f: BinaryIO):
    def length_at(offset: int) -> int:
        f.seek(offset)
        return _LENGTH.unpack(f.read(8))[0]

    return length_at


def _count_records(path: str, size: int, length_at) -> int:
    count, offset = 0, 0
    while offset < size:
        # length (uint64 LE), its masked CRC, the data, the data's masked CRC
        end = offset + 12  # the header first
        if end <= size:
            end += length_at(offset) + 4
        if end > size:
            needs = f"needs {end} bytes, the file has {size}"
            if not count:  # text, say, whose first bytes read as a huge length
                raise InputError(f"{path} is not a TFRecord file (its first record {needs})")
            raise InputError(
                f"{path}: truncated TFRecord file: record {count + 1} starts at byte "
                f"{offset} and {needs}; copy or make it again"
            )
        offset, count = end, count + 1
    return count


_LENGTH = struct.Struct("<Q")
