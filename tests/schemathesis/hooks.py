"""schemathesis extensions for `make schemathesis` (scripts/schemathesis.sh), loaded by the
`hooks` setting of tests/schemathesis/schemathesis.toml.

`documented_rejection`: a 400 to positive (schema-valid) data passes only when its message
names a documented rule of the operation, one that no JSON Schema keyword states. For the
operations where schemathesis.toml lets `positive_data_acceptance` accept a 400, it lists
those rules' messages under `checks.documented_rejection.messages`; every other 400 to
positive data (a parser's raw message, a rule the description does not state) fails the
run, naming the operation, the request and the message. Operations whose
`positive_data_acceptance` does not accept 400 need no list: that check fails them itself.

An entry of `messages` is the whole message after `{"error": "`, written out, with these
placeholders for the parts the server fills in:

    {index}   an array index (`lineItems[{index}].amount`)
    {number}  a decimal number (`= {number}`)
    {uuid}    an id
    {any}     any text (a project's title, say)

Written against schemathesis 4.32.5 (tests/schemathesis/requirements.txt): `case.meta`
tells positive data from negative, and the request-shape probes of the coverage phase are
skipped as the built-in `positive_data_acceptance` skips them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import schemathesis
from schemathesis.core import NotSet
from schemathesis.core.failures import Failure
from schemathesis.specs.openapi.checks import is_unexpected_http_status_case

CHECK = "documented_rejection"
CONFIG = "tests/schemathesis/schemathesis.toml"

_PLACEHOLDERS = {
    "{index}": r"[0-9]+",
    "{number}": r"-?[0-9]+(?:\.[0-9]+)?",
    "{uuid}": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "{any}": r".+",
}
_PLACEHOLDER = re.compile("|".join(re.escape(name) for name in _PLACEHOLDERS))


@lru_cache(maxsize=None)
def _compile(template: str) -> re.Pattern[str]:
    """The regular expression of one `messages` entry: its text literally, its placeholders
    as they say."""
    parts: list[str] = []
    position = 0
    for found in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position : found.start()]))
        parts.append(_PLACEHOLDERS[found.group()])
        position = found.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL)


def _rule_of(message: str) -> str:
    """The message with the values the server fills in taken out, so that one rule's
    refusals are one finding, and two rules two."""
    rule = re.sub(_PLACEHOLDERS["{uuid}"], "{uuid}", message)
    rule = re.sub(r"\[[0-9]+\]", "[{index}]", rule)
    return re.sub(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?", "{number}", rule)


def _accepts_400(statuses: list[str]) -> bool:
    return any(status in ("400", "4xx", "4XX") for status in statuses)


def _shown(value: object, limit: int = 2000) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


class UndocumentedRejection(Failure):
    """A 400 to schema-valid data whose message names no documented rule of the operation."""

    code = "ST901"
    kind_title = "Schema-valid request refused by no documented rule"

    def __init__(self, *, operation: str, message: str, rule: str) -> None:
        super().__init__(operation=operation, message=message)
        self.rule = rule

    @property
    def _unique_key(self) -> str:
        # One finding per rule the server broke, rather than one per operation.
        return self.rule


@schemathesis.check
def documented_rejection(ctx, response, case):
    """A 400 to positive data must name a rule that schemathesis.toml lists for the
    operation, each a documented rule no JSON Schema states (docs/api.md)."""
    meta = case.meta
    if meta is None or is_unexpected_http_status_case(case) or not meta.generation.mode.is_positive:
        return True
    if response.status_code != 400:
        return None
    if not _accepts_400(ctx.config.positive_data_acceptance.expected_statuses or []):
        # positive_data_acceptance refuses this 400 on its own.
        return None
    operation = case.operation.label
    templates = (ctx.config.custom_kwargs.get(CHECK) or {}).get("messages") or []
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, str):
        raise UndocumentedRejection(
            operation=operation,
            rule="(no error message)",
            message=f"The 400 has no `error` message: {_shown(body)}",
        )
    if any(_compile(template).fullmatch(error) for template in templates):
        return None
    where = f"checks.documented_rejection.messages ({CONFIG})"
    if templates:
        why = f"The message is none of those listed for {operation} under {where}."
    else:
        why = f"{operation} accepts a 400 but lists no {where}."
    request = []
    if case.path_parameters:
        request.append(f"Path: {_shown(case.path_parameters)}")
    if case.query:
        request.append(f"Query: {_shown(case.query)}")
    if not isinstance(case.body, (NotSet, bytes, bytearray)) and case.body is not None:
        request.append(f"Body: {_shown(case.body)}")
    raise UndocumentedRejection(
        operation=operation,
        rule=_rule_of(error),
        message="\n".join(
            [
                f"400 {json.dumps(error, ensure_ascii=False)} to a request that matches the schema.",
                why,
                *request,
                "The description and the server disagree: make the schema state the rule, or the",
                "server take the request. List the message only for a rule that docs/api.md",
                "documents and no JSON Schema keyword can state.",
            ]
        ),
    )
