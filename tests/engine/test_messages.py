"""A worker's messages are data: every malformed field is refused by name before the judge uses any of it."""

import pytest

from grader.engine.confinement import messages
from grader.engine.confinement.protections import Protections, unconfined

JUNK = [[[{"a": [1e308, -1, None]}]]]
GOOD_ERROR = {"kind": "exception", "type": "ValueError", "message": "no", "where": ["lookup.py", 3, "x = 1"]}


def test_well_formed_messages_pass_with_their_fields():
    assert messages.answer({"id": 4, "value": {"float": 1.0}}, 4) == {"value": {"float": 1.0}, "arguments": None,
                                                                  "read": None}
    record = messages.answer({"id": 4, "error": GOOD_ERROR}, 4)["error"]
    assert (record.kind, record.type_name, record.message, record.where) == (
        "exception", "ValueError", "no", ("lookup.py", 3, "x = 1"))
    assert messages.error_record({**GOOD_ERROR, "where": ["<string>", None, ""]}).where is None  # a SyntaxError's
    assert messages.printed_report({"id": 4, "output": "abc", "lines": 10**40}, 4, 2) == ("ab", 10**9)
    assert messages.status_line("signal 9") == ("signal", 9) and messages.status_line("exit -1") == ("exit", -1)


@pytest.mark.parametrize("message", [
    None, [], "value", {"value": 1}, {"id": "4", "value": 1}, {"id": 4.0, "value": 1}, {"id": True, "value": 1},
    {"id": 5, "value": 1}, {"id": 4}, {"id": 4, "value": 1, "error": GOOD_ERROR}, {"id": 4, "error": JUNK},
    {"id": 4, "error": {**GOOD_ERROR, "kind": ["exception"]}}, {"id": 4, "error": {**GOOD_ERROR, "kind": "crash"}},
    {"id": 4, "error": {**GOOD_ERROR, "kind": {"x": 1}}}, {"id": 4, "error": {**GOOD_ERROR, "type": JUNK}},
    {"id": 4, "error": {**GOOD_ERROR, "message": 10**40}}, {"id": 4, "error": {**GOOD_ERROR, "where": JUNK}},
    {"id": 4, "error": {**GOOD_ERROR, "where": ["a.py", 10**40, ""]}},
    {"id": 4, "error": {**GOOD_ERROR, "where": ["a.py", -1, ""]}},
    {"id": 4, "error": {**GOOD_ERROR, "where": [JUNK, 3, {"y": 1}]}},
    {"id": 4, "error": {**GOOD_ERROR, "where": ["a.py", 3.5, ""]}},
], ids=repr)
def test_a_malformed_answer_is_refused_by_name(message):
    with pytest.raises(messages.Malformed):
        messages.answer(message, 4)


@pytest.mark.parametrize("report", [
    None, JUNK, {"id": 4, "output": JUNK, "lines": 1}, {"id": 4, "output": "x", "lines": -1},
    {"id": 4, "output": "x", "lines": "1"}, {"id": 4, "output": "x", "lines": 1.0}, {"id": 3, "output": "", "lines": 0},
], ids=repr)
def test_a_malformed_printed_report_is_refused(report):
    with pytest.raises(messages.Malformed):
        messages.printed_report(report, 4, 100)


@pytest.mark.parametrize("line", ["", "pid", "pid x", "pid 0", "pid -3", "signal ²", "exit 1e9", "pid 99999999999",
                                  "signal 9 9", " pid 3"])
def test_a_malformed_status_line_is_refused(line):
    with pytest.raises(messages.Malformed):
        messages.status_line(line)


def test_a_ready_message_is_checked_before_its_protections_are_read():
    assert messages.ready({"ready": True, "protections": {}}) == ({}, "")
    assert messages.ready({"ready": False, "error": JUNK}) == (None, "no reason given")
    for malformed in (None, JUNK, {"ready": 1}, {"ready": "yes"}):
        with pytest.raises(messages.Malformed):
            messages.ready(malformed)


@pytest.mark.parametrize("field, value", [
    ("held", "signals"), ("held", {"signals": "seccomp"}), ("held", {"elsewhere": []}), ("held", {"signals": [1]}),
    ("landlock_abi", "6"), ("landlock_abi", True), ("scratch_capped", 1), ("namespaces", {"pid": "yes"}),
    ("notes", "one"), ("notes", [JUNK]), ("unconfined_on", None), ("extra", 1),
])
def test_a_malformed_report_of_protections_is_refused(field, value):
    plain = unconfined("macOS").to_plain()
    assert Protections.from_plain(plain) == unconfined("macOS")
    with pytest.raises(ValueError):
        Protections.from_plain({**plain, field: value})
