"""A fake OpenAI Batch API on 127.0.0.1 for tests: files and batches, answered by a responder.

POST /v1/files (multipart, purpose=batch), POST /v1/batches, GET /v1/batches/{id},
POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content. A batch moves validating ->
in_progress -> completed over successive polls (`polls_to_finish`); on completion each request
line is answered by `responder` (the same `Reply`-returning functions the judge server uses): a
200 goes in the output file, any other status in the error file. `line_error` scripts error-file
lines, `outcome` makes the next batch end `expired` or `failed` instead, `refuse_uploads` makes
POST /files answer an error (an endpoint without the Batch API).
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from judge_server import Reply


class _HTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a run killed mid-poll) is no error of the fake's."""


class BatchServer:
    """The server; `url` is an OpenAI base URL. Use as a context manager."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.responder = responder
        self.line_error: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda body: None
        self.outcome: list[str] = []
        """Final statuses for the next batches to finish (`expired`, `failed`), in order."""
        self.polls_to_finish = 2
        self.refuse_uploads: tuple[int, bytes] | None = None
        """(status, body) that POST /files answers instead of storing the file: an endpoint
        without the Batch API (a chat-only server answers 404, some 400 with a plain body)."""
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.submissions: list[str] = []
        self.request_lines: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self.downloads: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._http = _HTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> BatchServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def upload(self, data: bytes, filename: str) -> dict[str, Any]:
        file_id = self.new_id("file")
        self.files[file_id] = data
        return _file_object(file_id, filename, len(data))

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        batch_id = self.new_id("batch")
        lines = [json.loads(line) for line in self.files[request["input_file_id"]].splitlines()]
        self.request_lines.extend(lines)
        self.submissions.append(batch_id)
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": request["endpoint"],
            "completion_window": request["completion_window"],
            "input_file_id": request["input_file_id"],
            "status": "validating",
            "created_at": int(time.time()),
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "_polls": 0,
            "_lines": lines,
        }
        return self.public(batch_id)

    def poll(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["status"] == "cancelling":
            batch["status"] = "cancelled"
        elif batch["status"] not in ("completed", "failed", "expired", "cancelled"):
            batch["_polls"] += 1
            if batch["_polls"] >= self.polls_to_finish:
                self._finish(batch)
            else:
                batch["status"] = "in_progress"
        return self.public(batch_id)

    def cancel(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["status"] not in ("completed", "failed", "expired", "cancelled"):
            batch["status"] = "cancelling"
        return self.public(batch_id)

    def public(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}

    def _finish(self, batch: dict[str, Any]) -> None:
        outcome = self.outcome.pop(0) if self.outcome else "completed"
        if outcome == "failed":
            batch["status"] = "failed"
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_request", "message": "scripted validation failure"}],
            }
            return
        if outcome == "expired":
            batch["status"] = "expired"
            return
        output, errors = [], []
        for line in batch["_lines"]:
            custom_id = line["custom_id"]
            scripted = self.line_error(line["body"])
            if scripted is not None:
                errors.append({"id": self.new_id("line"), "custom_id": custom_id, **scripted})
                continue
            assert self.responder is not None, "the test set no responder"
            reply = self.responder(line["body"])
            answer = {
                "id": self.new_id("line"),
                "custom_id": custom_id,
                "response": {
                    "status_code": reply.status,
                    "request_id": self.new_id("req"),
                    "body": reply.body,
                },
                "error": None,
            }
            (output if reply.status == 200 else errors).append(answer)
        for name, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                data = "".join(json.dumps(line) + "\n" for line in lines).encode()
                batch[name] = self.upload(data, f"{batch['id']}-{name}.jsonl")["id"]
        batch["status"] = "completed"
        batch["request_counts"]["completed"] = len(output)
        batch["request_counts"]["failed"] = len(errors)


def _file_object(file_id: str, filename: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": "batch",
        "status": "processed",
    }


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Form fields by name: (filename, bytes)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[str(name)] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields


def _handler_for(server: BatchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._record()
            parts = self.path.split("?")[0].strip("/").split("/")
            with server._lock:
                if parts[1:2] == ["batches"] and len(parts) == 3 and parts[2] in server.batches:
                    self._send(200, server.poll(parts[2]))
                elif parts[1:2] == ["files"] and parts[-1] == "content":
                    data = server.files.get(parts[2])
                    if data is None:
                        self._send(404, {"error": {"message": "no such file"}})
                        return
                    server.downloads.append(parts[2])
                    self._send(200, data)
                else:
                    self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            self._record()
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            parts = self.path.split("?")[0].strip("/").split("/")
            with server._lock:
                if parts[1:] == ["files"] and server.refuse_uploads is not None:
                    self._send(*server.refuse_uploads)
                elif parts[1:] == ["files"]:
                    fields = _multipart(self.headers["Content-Type"], body)
                    if fields.get("purpose", (None, b""))[1] != b"batch":
                        self._send(400, {"error": {"message": "purpose must be batch"}})
                        return
                    filename, data = fields["file"]
                    self._send(200, server.upload(data, filename or "upload.jsonl"))
                elif parts[1:] == ["batches"]:
                    self._send(200, server.create(json.loads(body)))
                elif parts[1:2] == ["batches"] and parts[3:] == ["cancel"]:
                    self._send(200, server.cancel(parts[2]))
                else:
                    self._send(404, {"error": {"message": "not found"}})

        def _record(self) -> None:
            with server._lock:
                server.authorizations.append(self.headers.get("Authorization", ""))

        def _send(self, status: int, body: Any) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
