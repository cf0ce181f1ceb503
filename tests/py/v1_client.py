"""Drives Kotoba's /v1 with the official `openai` Python client, as an ElevenLabs-style
custom-LLM caller would: a whole turn, a streamed turn, a turn where she uses a tool,
a wrong key, the model list and a bad request. Prints one JSON object of what it saw;
the Rust test (tests/suite/v1_python.rs) starts the server, scripts the model and
checks the figures. Reads KOTOBA_V1_BASE (…/v1) and KOTOBA_V1_KEY."""

import json
import os

import openai
from openai import OpenAI

base = os.environ["KOTOBA_V1_BASE"]
key = os.environ["KOTOBA_V1_KEY"]
client = OpenAI(base_url=base, api_key=key, max_retries=0, timeout=30)
out = {"openai_version": openai.__version__}


def user(text):
    return [
        {"role": "system", "content": "You are the agent's voice."},
        {"role": "user", "content": text},
    ]


def stream(messages, **kw):
    parts, roles, finish, chunks = [], [], None, 0
    for chunk in client.chat.completions.create(model="kotoba", messages=messages, stream=True, **kw):
        chunks += 1
        choice = chunk.choices[0]
        if choice.delta.role:
            roles.append(choice.delta.role)
        if choice.delta.content:
            parts.append(choice.delta.content)
        if choice.finish_reason:
            finish = choice.finish_reason
    return {"text": "".join(parts), "roles": roles, "finish": finish, "content_chunks": len(parts), "chunks": chunks}


# 1. A whole turn, the session named by the `user` field.
r = client.chat.completions.create(model="kotoba", messages=user("hello"), extra_body={"user": "py-plain"})
out["plain"] = {"text": r.choices[0].message.content, "finish": r.choices[0].finish_reason, "object": r.object}

# 2. A streamed turn, the session named by the X-Session-Id header.
out["stream"] = stream(user("tell me something"), extra_headers={"X-Session-Id": "py-stream"})

# 3. A turn where she writes a file before answering (the tool runs inside the turn).
out["tool"] = stream(user("write a note for me"), extra_body={"user": "py-tool"})

# 4. A wrong key.
try:
    OpenAI(base_url=base, api_key="not-the-key", max_retries=0).chat.completions.create(
        model="kotoba", messages=user("hi")
    )
    out["wrong_key"] = "no error"
except openai.AuthenticationError as e:
    out["wrong_key"] = {"error": "AuthenticationError", "status": e.status_code, "message": str(e)}

# 5. The model list.
out["models"] = [m.id for m in client.models.list()]

# 6. A request with no user message.
try:
    client.chat.completions.create(model="kotoba", messages=[{"role": "assistant", "content": "hi"}])
    out["bad_request"] = "no error"
except openai.BadRequestError as e:
    out["bad_request"] = {"error": "BadRequestError", "status": e.status_code}

print(json.dumps(out))
