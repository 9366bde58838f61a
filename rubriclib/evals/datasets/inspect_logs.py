"""inspect_ai log files as a dataset: an `.eval` log (a zip holding a JSON file per sample, read
one sample at a time) or a `.json` log (one document with `eval` and `samples`). Each sample is
a row: its messages the run, its input, its target the reference, its completion the output,
its metadata (with inspect's scores and error) the row's."""

from __future__ import annotations

import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rubriclib.errors import EvalError, Problem
from rubriclib.item import (
    Item,
    Problems,
    Transcript,
    TranscriptError,
    field_text,
    inspect_message,
    read_inspect,
)

SAMPLE_ENTRY = re.compile(r"samples/(.+)_epoch_(\d+)\.json")
"""Where an `.eval` log keeps each sample: `samples/ID_epoch_N.json`."""
ZIP_ZSTANDARD = 93
"""The zip method inspect compresses `.eval` logs with (Python's zipfile reads it from 3.14)."""
MAX_SAMPLE_BYTES = 256 * 1024 * 1024
"""A sample larger than this, uncompressed, is refused (a zip can claim any size)."""
ATTACHMENT = "attachment://"
"""How a log refers to content kept once in the sample's `attachments` (images, long texts)."""


@dataclass(frozen=True)
class LogSample:
    """One sample as an inspect log holds it, read into an Item by `item`."""

    data: Any
    epochs: bool
    """Whether the log ran more than one epoch: a row id is then `ID_epoch_N`."""

    def item(self, where: str, doubts: Problems) -> Item | list[Problem]:
        """The sample as an Item, or every problem with it, each naming its field; what was
        doubtful in pairing its run's tool results added to `doubts`."""
        sample = self.data
        if not isinstance(sample, Mapping):
            return [Problem(where, "sample", f"must be a mapping, not {type(sample).__name__}")]
        attachments = sample.get("attachments") or {}
        problems: list[Problem] = []
        messages = _resolved(sample.get("messages"), attachments)
        transcript = _transcript(messages, where, problems, doubts)
        input_text = _input(_resolved(sample.get("input"), attachments), where, problems)
        metadata = sample.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            problems.append(Problem(where, "metadata", "must be a mapping"))
            metadata = {}
        metadata = dict(metadata)
        try:
            context = field_text("context", metadata.pop("context", None))
        except ValueError as error:
            problems.append(Problem(where, "metadata.context", str(error)))
        target = sample.get("target") or ""
        texts = [target] if isinstance(target, str) else target
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            problems.append(Problem(where, "target", "must be text or a list of texts"))
            texts = []
        row_id, epoch = sample.get("id"), sample.get("epoch", 1)
        if isinstance(row_id, bool) or not isinstance(row_id, str | int) or row_id == "":
            problems.append(Problem(where, "id", "must be a string or an integer"))
        if problems:
            return problems
        output = _resolved(sample.get("output"), attachments)
        completion = output.get("completion") if isinstance(output, Mapping) else None
        final = transcript.final_answer if transcript is not None else None
        return Item(
            output=str(completion or final or ""),
            transcript=transcript,
            input=input_text,
            context=context,
            reference="\n".join(text for text in texts if text) or None,
            id=f"{row_id}_epoch_{epoch}" if self.epochs else str(row_id),
            metadata={**metadata, "inspect": _inspect_metadata(sample, epoch)},
        )


def is_inspect_log(data: Any) -> bool:
    """Whether a JSON document is an inspect log (a rubriclib dataset is a list, or `rows`)."""
    return isinstance(data, Mapping) and "eval" in data


def json_log_samples(data: Mapping[str, Any], path: Path) -> Iterator[tuple[str, LogSample]]:
    """The samples of a `.json` log, in the order inspect wrote them."""
    samples = data.get("samples")
    if not samples:
        raise EvalError.single(str(path), "samples", _no_samples(data.get("status")))
    if not isinstance(samples, list):
        raise EvalError.single(str(path), "samples", "must be a list of samples")
    epochs = any(isinstance(s, Mapping) and s.get("epoch", 1) != 1 for s in samples)
    for index, sample in enumerate(samples):
        yield f"{path}: samples[{index}]", LogSample(sample, epochs)


def eval_log_samples(path: Path) -> Iterator[tuple[str, LogSample | Problem]]:
    """The samples of an `.eval` log, one read at a time, in inspect's order (epoch, then id);
    a sample entry that cannot be read is a Problem naming it, and the others are still read."""
    with path.open("rb") as handle:
        try:
            archive = zipfile.ZipFile(handle)
        except zipfile.BadZipFile as error:
            raise EvalError.single(
                str(path), "dataset", f"is not an inspect .eval log (a zip file): {error}"
            ) from None
        entries = {info.filename: info for info in archive.infolist()}  # a rewrite's last wins
        found = {name: SAMPLE_ENTRY.fullmatch(name) for name in entries}
        samples = sorted(
            ((match[1], int(match[2]), name) for name, match in found.items() if match),
            key=lambda sample: (
                sample[1],
                sample[0].zfill(20) if sample[0].isdigit() else sample[0],
            ),
        )
        if not samples:
            raise EvalError.single(
                str(path), "samples", _no_samples(_status(archive, handle, path))
            )
        epochs = any(epoch != 1 for _, epoch, _ in samples)
        for _, _, name in samples:
            where = f"{path}: {name}"
            try:
                data = json.loads(_entry(archive, handle, entries[name], path))
            except (
                zipfile.BadZipFile,
                zlib.error,
                EOFError,
                NotImplementedError,
                ValueError,
            ) as error:
                yield where, Problem(where, "sample", f"cannot be read: {error}")
                continue
            yield where, LogSample(data, epochs)


def _entry(archive: zipfile.ZipFile, handle: IO[bytes], info: zipfile.ZipInfo, path: Path) -> bytes:
    """An entry's bytes; a Zstandard one read with `zstandard` where zipfile cannot."""
    if info.file_size > MAX_SAMPLE_BYTES:
        raise ValueError(f"is {info.file_size} bytes; at most {MAX_SAMPLE_BYTES} are read")
    if info.compress_type != ZIP_ZSTANDARD or hasattr(zipfile, "ZIP_ZSTANDARD"):
        return archive.read(info)
    try:
        import zstandard
    except ImportError:
        raise EvalError.single(
            str(path),
            "dataset",
            "is compressed with Zstandard, which Python reads itself only from 3.14: "
            "pip install 'rubriclib[inspect-logs]' (zstandard)",
        ) from None
    handle.seek(info.header_offset)
    header = handle.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header for {info.filename}")
    name_length, extra_length = struct.unpack("<2H", header[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(
            handle.read(info.compress_size), read_across_frames=True
        )
        data = reader.read(info.file_size + 1)
    except zstandard.ZstdError as error:
        raise zipfile.BadZipFile(f"Zstandard: {error}") from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"bad CRC or size for {info.filename}")
    return bytes(data)


def _status(archive: zipfile.ZipFile, handle: IO[bytes], path: Path) -> Any:
    """The log's status, from its header (None when it has none yet)."""
    info = {info.filename: info for info in archive.infolist()}.get("header.json")
    try:
        header = json.loads(_entry(archive, handle, info, path)) if info is not None else {}
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError):
        return None
    return header.get("status") if isinstance(header, Mapping) else None


def _no_samples(status: Any) -> str:
    return (
        f"the log has none (status {status!r}): inspect writes a log without samples when a run "
        "stops before any finishes or runs with --no-log-samples"
    )


def _resolved(value: Any, attachments: Mapping[str, str]) -> Any:
    """`value` with every `attachment://ID` the sample's attachments hold put back."""
    if isinstance(value, str) and value.startswith(ATTACHMENT):
        return attachments.get(value[len(ATTACHMENT) :], value)
    if isinstance(value, list):
        return [_resolved(item, attachments) for item in value]
    if isinstance(value, Mapping):
        return {key: _resolved(item, attachments) for key, item in value.items()}
    return value


def _transcript(
    messages: Any, where: str, problems: list[Problem], doubts: Problems
) -> Transcript | None:
    """The sample's messages as its run; their problems added, each naming `messages[N]`."""
    if not isinstance(messages, list):
        problems.append(Problem(where, "messages", "must be a list of messages"))
        return None
    try:
        return read_inspect(messages, "messages", doubts)
    except TranscriptError as error:
        problems.extend(Problem(where, place, why) for place, why in error.problems)
        return None


def _input(value: Any, where: str, problems: list[Problem]) -> str | None:
    """The sample's input as text: chat messages shown as `role: text` lines."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        problems.append(Problem(where, "input", "must be text or a list of messages"))
        return None
    found: list[tuple[str, str]] = []
    lines = []
    for index, message in enumerate(value):
        for read in inspect_message(message, f"input[{index}]", found):
            lines.append(f"{read.role}: {read.text}")
    problems.extend(Problem(where, place, why) for place, why in found)
    return "\n".join(lines)


def _inspect_metadata(sample: Mapping[str, Any], epoch: Any) -> dict[str, Any]:
    """What inspect recorded of the sample beside its fields: its epoch, each scorer's value,
    and the error that stopped it."""
    recorded: dict[str, Any] = {"epoch": epoch}
    scores = sample.get("scores")
    if isinstance(scores, Mapping) and scores:
        recorded["scores"] = {
            name: score.get("value") if isinstance(score, Mapping) else score
            for name, score in scores.items()
        }
    error = sample.get("error")
    if isinstance(error, Mapping):
        recorded["error"] = error.get("message")
    return recorded
