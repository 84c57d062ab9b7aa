"""Lines of a vLLM 0.19 `vllm serve` log, as the server writes them to its stdout.

Templates follow docs/formats.md section 2 (vLLM's logger header, the process tag
added to every physical line, multi-line messages joined with "\\r\\n" plus the header,
the uvicorn access line without a timestamp, ColoredFormatter's ANSI codes when the
container has a TTY). Each function returns text without the final newline.
"""

from __future__ import annotations

from datetime import datetime

RESET = "\x1b[0m"
_LEVEL_COLOUR = {"INFO": "\x1b[32m", "WARNING": "\x1b[33m", "ERROR": "\x1b[31m", "DEBUG": "\x1b[37m"}
_GREY = "\x1b[90m"
_TAG_ON, _TAG_OFF = "\x1b[0;36m", "\x1b[0;0m"
STATS_SITE = "loggers.py:259"  # LoggingStatLogger.log call site in 0.16-0.19
SPEC_SITE = "metrics.py:101"  # SpecDecodingLogging.log in 0.19


def stamp(t: datetime) -> str:
    return t.strftime("%m-%d %H:%M:%S")


def _tag(proc: str | None, colour: bool) -> str:
    if not proc:
        return ""
    return f"{_TAG_ON}({proc}){_TAG_OFF} " if colour else f"({proc}) "


def log(proc: str | None, level: str, t: datetime, site: str, message: str, colour: bool = False) -> str:
    """One logger call; a message with newlines becomes several physical lines."""
    if colour:
        head = f"{_LEVEL_COLOUR[level]}{level}{RESET} {_GREY}{stamp(t)}{RESET} {_GREY}[{site}]{RESET} "
    else:
        head = f"{level} {stamp(t)} [{site}] "
    tag = _tag(proc, colour)
    parts = message.split("\n")
    return "\r\n".join(tag + head + p for p in parts)


def raw(proc: str | None, text: str, colour: bool = False) -> str:
    """Text a process printed without the logger (uvicorn's traceback dump): tag only."""
    tag = _tag(proc, colour)
    return "\n".join(tag + p for p in text.split("\n"))


def uvicorn(proc: str, level: str, message: str, colour: bool = False) -> str:
    """uvicorn's own lines: '%(levelprefix)s %(message)s', e.g. 'INFO:     Started server process [1]'."""
    pad = " " * (8 - len(level)) + " "
    name = f"{_LEVEL_COLOUR[level]}{level}{RESET}" if colour else level
    return f"{_tag(proc, colour)}{name}:{pad}{message}"


_REASON = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}
_STATUS_COLOUR = {2: "\x1b[32m", 4: "\x1b[31m", 5: "\x1b[91m"}


def access(proc: str, client: str, method: str, path: str, status: int, colour: bool = False) -> str:
    """The uvicorn access line: no timestamp, placed by the stats lines around it."""
    request = f"{method} {path} HTTP/1.1"
    code = f"{status} {_REASON[status]}"
    pad = " " * 5
    if colour:
        return (f"{_tag(proc, True)}{_LEVEL_COLOUR['INFO']}INFO{RESET}:{pad}{client} - "
                f'"\x1b[1m{request}{RESET}" {_STATUS_COLOUR[status // 100]}{code}{RESET}')
    return f'{_tag(proc, False)}INFO:{pad}{client} - "{request}" {code}'


def stats(t: datetime, prompt: float, gen: float, running: int, waiting: int, kv_pct: float,
          hit_pct: float, preemptions: int = 0, colour: bool = False) -> str:
    """Engine 000 periodic stats line (0.12-0.19 template; Preemptions only when > 0)."""
    parts = [f"Avg prompt throughput: {prompt:.1f} tokens/s",
             f"Avg generation throughput: {gen:.1f} tokens/s",
             f"Running: {running} reqs", f"Waiting: {waiting} reqs"]
    if preemptions > 0:
        parts.append(f"Preemptions: {preemptions}")
    parts += [f"GPU KV cache usage: {kv_pct:.1f}%", f"Prefix cache hit rate: {hit_pct:.1f}%"]
    return log("APIServer pid=1", "INFO", t, STATS_SITE, "Engine 000: " + ", ".join(parts), colour)


def spec_decoding(t: datetime, drafts: int, accepted_per_pos: list[int], interval_s: float,
                  colour: bool = False) -> str:
    """SpecDecoding metrics line (0.11-0.33 template), printed right after the stats line."""
    k = len(accepted_per_pos)
    accepted = sum(accepted_per_pos)
    drafted = drafts * k
    mean_len = 1 + accepted / drafts
    per_pos = ", ".join(f"{a / drafts:.3f}" for a in accepted_per_pos)
    rate = 100 * accepted / drafted
    msg = (f"SpecDecoding metrics: Mean acceptance length: {mean_len:.2f}, "
           f"Accepted throughput: {accepted / interval_s:.2f} tokens/s, "
           f"Drafted throughput: {drafted / interval_s:.2f} tokens/s, "
           f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
           f"Per-position acceptance rate: {per_pos}, Avg Draft acceptance rate: {rate:.1f}%")
    return log("APIServer pid=1", "INFO", t, SPEC_SITE, msg, colour)


def sampling_params(max_tokens: int) -> str:
    """SamplingParams repr as vLLM 0.19 prints it in the request log."""
    return ("SamplingParams(n=1, presence_penalty=1.5, frequency_penalty=0.0, repetition_penalty=1.0, "
            "temperature=1.0, top_p=0.95, top_k=20, min_p=0.0, seed=None, stop=[], stop_token_ids=[], "
            "bad_words=[], include_stop_str_in_output=False, ignore_eos=False, "
            f"max_tokens={max_tokens}, min_tokens=0, logprobs=None, prompt_logprobs=None, "
            "skip_special_tokens=True, spaces_between_special_tokens=True, truncate_prompt_tokens=None, "
            "structured_outputs=None, extra_args=None)")


def logo(version: str, model: str) -> str:
    """The ASCII banner vLLM prints at start-up (one logger call, several lines)."""
    return "\n".join([
        "",
        "       \u2588     \u2588     \u2588\u2584   \u2584\u2588",
        f" \u2584\u2584 \u2584\u2588 \u2588     \u2588     \u2588 \u2580\u2584\u2580 \u2588  version {version}",
        f"  \u2588\u2584\u2588\u2580 \u2588     \u2588     \u2588     \u2588  model   {model}",
        "   \u2580\u2580  \u2580\u2580\u2580\u2580\u2580 \u2580\u2580\u2580\u2580\u2580 \u2580     \u2580",
        "",
    ])


ROUTES = ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/tokenize", "/detokenize",
          "/load", "/version", "/health", "/metrics", "/v1/models", "/ping", "/v1/responses",
          "/v1/chat/completions", "/v1/completions", "/v1/messages", "/invocations")


def route_methods(route: str) -> str:
    if route in ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"):
        return "HEAD, GET"
    if route in ("/health", "/metrics", "/v1/models", "/version", "/load"):
        return "GET"
    if route == "/ping":
        return "GET, POST"
    return "POST"


# The last line of a request's or the output handler's traceback once the engine core has died.
_ENGINE_DEAD = ("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. "
                "See stack trace (above) for the root cause.")


def _traceback(message: str, *frames: str) -> str:
    """An exception as the log shows it: the message, Python's traceback header, then `frames`
    (the frames' lines and the exception's, verbatim)."""
    return "\n".join([message, "Traceback (most recent call last):", *frames])


def engine_traceback(error: str) -> str:
    """The EngineCore busy-loop traceback of a worker failure (vLLM 0.19 paths)."""
    site = "/usr/local/lib/python3.12/dist-packages/vllm"
    return _traceback(
        "EngineCore encountered a fatal error.",
        f'  File "{site}/v1/engine/core.py", line 894, in run_engine_core',
        "    engine_core.run_busy_loop()",
        f'  File "{site}/v1/engine/core.py", line 921, in run_busy_loop',
        "    self._process_engine_step()",
        f'  File "{site}/v1/engine/core.py", line 954, in _process_engine_step',
        "    outputs, model_executed = self.step_fn()",
        "                              ^^^^^^^^^^^^^^",
        f'  File "{site}/v1/engine/core.py", line 389, in step',
        "    model_output = future.result()",
        "                   ^^^^^^^^^^^^^^^",
        '  File "/usr/lib/python3.12/concurrent/futures/_base.py", line 449, in result',
        "    return self.__get_result()",
        "           ^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/lib/python3.12/concurrent/futures/_base.py", line 401, in __get_result',
        "    raise self._exception",
        f'  File "{site}/v1/executor/multiproc_executor.py", line 287, in get_response',
        "    raise RuntimeError(",
        f"RuntimeError: Worker failed with error '{error}', please check the stack trace above for the root cause",
    )


def output_handler_traceback() -> str:
    site = "/usr/local/lib/python3.12/dist-packages/vllm"
    return _traceback(
        "AsyncLLM output_handler failed.",
        f'  File "{site}/v1/engine/async_llm.py", line 512, in output_handler',
        "    outputs = await engine_core.get_output_async()",
        "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/v1/engine/core_client.py", line 887, in get_output_async',
        "    raise self._format_exception(outputs) from None",
        _ENGINE_DEAD,
    )


def asgi_traceback() -> str:
    """uvicorn's dump of an exception in a streaming response (printed, not logged)."""
    site = "/usr/local/lib/python3.12/dist-packages"
    return _traceback(
        "ERROR:    Exception in ASGI application",
        f'  File "{site}/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi',
        "    result = await app(  # type: ignore[func-returns-value]",
        "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/starlette/responses.py", line 264, in __call__',
        "    await wrap(partial(self.stream_response, send))",
        f'  File "{site}/vllm/entrypoints/openai/serving_chat.py", line 1318, in chat_completion_stream_generator',
        "    async for res in result_generator:",
        f'  File "{site}/vllm/v1/engine/async_llm.py", line 431, in generate',
        "    out = q.get_nowait() or await q.get()",
        "                            ^^^^^^^^^^^^^",
        _ENGINE_DEAD,
    )


def tool_parser_traceback(column: int) -> str:
    """A malformed tool call the qwen3_coder parser could not decode (logger.exception)."""
    site = "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/tool_parsers"
    return _traceback(
        "Error in extracting tool call from response.",
        f'  File "{site}/qwen3coder_tool_parser.py", line 318, in extract_tool_calls',
        "    function_calls = self._get_function_calls(model_output)",
        "                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/qwen3coder_tool_parser.py", line 244, in _parse_xml_function_call',
        "    param_value = json.loads(param_value)",
        "                  ^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/lib/python3.12/json/__init__.py", line 346, in loads',
        "    return _default_decoder.decode(s)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/lib/python3.12/json/decoder.py", line 338, in decode',
        "    obj, end = self.raw_decode(s, idx=_w(s, 0).end())",
        "               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/lib/python3.12/json/decoder.py", line 354, in raw_decode',
        "    obj, end = self.scan_once(s, idx)",
        "               ^^^^^^^^^^^^^^^^^^^^^^",
        f"json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column {column} (char {column - 1})",
    )
