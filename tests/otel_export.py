"""Write an OpenTelemetry export of real agent runs: the OpenAI instrumentation
(opentelemetry-instrumentation-openai-v2) traces an `openai` client running a small agent loop
against the scripted Chat Completions server, and the OTLP encoders write what it recorded.

    python tests/otel_export.py FORM ENCODING OUT [side-call] [one-run]

FORM is how the instrumentation records messages: `events` (its default conventions, content
as `gen_ai.*.message` / `gen_ai.choice` log events), `span` or `details` (the latest GenAI
conventions: `gen_ai.input.messages` on the span, or on `gen_ai.client.inference.operation.details`
events), `off` (the latest conventions, content capture off), `events-off` (the default
conventions, content capture off: the older events come all the same, with roles, call ids and
tool names only). The default conventions are util-genai 0.4b0's, as pyproject pins it (what
other versions record: docs/agent-runs.md, OpenTelemetry). ENCODING is `protobuf` (the OTLP
protobuf encoders and protobuf's JSON mapping, ids in base64: OUT.json holds the spans, OUT.jsonl
a line per export) or `file` (the OTLP JSON file exporter, ids in hex, a line per batch). Beside
OUT, OUT.chat.json holds each run as the OpenAI chat messages the agent sent and received, by
trace id. Each run is an `invoke_agent` span (with input messages, as agent frameworks write it)
around its model calls. `side-call` adds a model call with other messages inside the first
run's trace; `one-run` records the first run only (an export of one trace).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

FORMS = {
    "events": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "span": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
    "details": {
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only",
        "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT": "true",
    },
    "off": {},
    "events-off": {},
}
LATEST = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
TOOLS = {
    "get_order": lambda arguments: json.dumps({"order_id": arguments["order_id"], "paid": 12.5}),
    "refund": lambda arguments: json.dumps({"status": "refunded"}),
}
RUNS = [
    [
        {"role": "system", "content": "You are Acme's support agent."},
        {"role": "user", "content": "Please refund order A-17, the mug arrived broken."},
    ],
    [{"role": "user", "content": "What is 2 + 2?"}],
]


def replies() -> list[Any]:
    """The server's answers: the first run calls two tools (ids reused across turns, as local
    servers number them), the second answers at once."""
    from judge_server import Reply, completion

    return [
        Reply(body=completion([("get_order", {"order_id": "A-17"})], "Let me look that up.")),
        Reply(body=completion([("refund", {"order_id": "A-17", "amount": 12.5})])),
        Reply(body=completion(content="Refunded $12.50 to your card.")),
        Reply(body=completion(content="4")),
    ]


def run_agent(client: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Call the model until it answers without tools; the run as chat messages."""
    while True:
        reply = client.chat.completions.create(model="scripted", messages=messages)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True, exclude={"refusal"}))
        if not message.tool_calls:
            return messages
        for call in message.tool_calls:
            result = TOOLS[call.function.name](json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def main(form: str, encoding: str, out: Path, side_call: bool, runs: int = len(RUNS)) -> None:
    os.environ.update(FORMS[form] | (LATEST if not form.startswith("events") else {}))
    import openai
    from google.protobuf.json_format import MessageToDict
    from judge_server import JudgeServer, Reply, completion
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": "support-agent"})
    tracer_provider, logger_provider = (
        TracerProvider(resource=resource),
        LoggerProvider(resource=resource),
    )
    memory = (InMemorySpanExporter(), InMemoryLogRecordExporter())
    files = (FileSpanExporter(out), FileLogExporter(out)) if encoding == "file" else memory
    tracer_provider.add_span_processor(SimpleSpanProcessor(files[0]))
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(files[1]))
    OpenAIInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    tracer = tracer_provider.get_tracer("agent")
    chats = {}
    with JudgeServer() as server:
        server.script(*replies())
        client = openai.OpenAI(base_url=server.url, api_key="no-key", max_retries=0)
        for index, messages in enumerate(RUNS[:runs]):
            with tracer.start_as_current_span("invoke_agent support") as span:
                # as agent frameworks record it: not a model call, never read as one
                span.set_attribute("gen_ai.operation.name", "invoke_agent")
                user = {"role": "user", "parts": [{"type": "text", "content": "(the request)"}]}
                span.set_attribute("gen_ai.input.messages", json.dumps([user]))
                if side_call and index == 0:
                    server.replies.appendleft(Reply(body=completion(content="A refund request.")))
                    run_agent(client, [{"role": "user", "content": "Summarize: refund A-17"}])
                trace_id = format(span.get_span_context().trace_id, "032x")
                chats[trace_id] = run_agent(client, [dict(m) for m in messages])
    tracer_provider.shutdown()
    logger_provider.shutdown()
    if encoding == "protobuf":
        exports = [
            MessageToDict(encode_spans(memory[0].get_finished_spans())),
            MessageToDict(encode_logs(memory[1].get_finished_logs())),
        ]
        if out.suffix == ".json":
            out.write_text(json.dumps(exports[0], indent=2), encoding="utf-8")
        else:
            lines = [json.dumps(export) + "\n" for export in exports if export]
            out.write_text("".join(lines), encoding="utf-8")
    out.with_suffix(".chat.json").write_text(json.dumps(chats, indent=2), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    flags = sys.argv[4:]
    runs = 1 if "one-run" in flags else len(RUNS)
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), "side-call" in flags, runs)
