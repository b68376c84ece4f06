"""Check yourself (ministack_course/quiz.py, ``/trace/<id>/quiz``): the
seed's questions about one trace, answered from its data, on the
fixture traces (an attach, a detach, a refused detach, a failed
attach); and the page, escaped, masked and locked down as the journey
page. (Answering in a browser: tests/functional/journey_page/.)"""

import copy
import json
import re

import pytest

from ministack_course import quiz
from ministack_course import web
from tests.support import journey_traces as traces


def _quiz(trace):
    return {q["id"]: q for q in quiz.questions(web.view(trace)["trace"])}


def _items(question):
    return {item["label"]: item["answer"] for item in question["items"]}


ALL = [traces.attach_trace, traces.detach_trace,
       traces.failed_detach_trace, traces.failed_attach_trace]


@pytest.mark.parametrize("make", ALL)
def test_every_answer_is_one_of_its_options(make):
    questions = _quiz(make())
    assert list(questions) == ["q-connection-info", "q-why-save",
                               "q-available", "q-rpc-kinds",
                               "q-match-calls"]
    for q in questions.values():
        if q["kind"] == "choice":
            values = [option["value"] for option in q["options"]]
            assert q["answer"] in values
            assert set(q["wrong"]) == set(values) - {q["answer"]}
            assert q["right"].startswith("Right")
            assert all(text.startswith("No") for text in q["wrong"].values())
        else:
            values = [choice["value"] for choice in q["choices"]]
            for item in q["items"]:
                assert item["answer"] in values
                assert set(item["wrong"]) == set(values) - {item["answer"]}
    answers = [item["answer"] for item in questions["q-match-calls"]["items"]]
    assert len(answers) == len(set(answers)) <= quiz.MAX_MATCH


def test_the_attach_quiz():
    q = _quiz(traces.attach_trace())
    info = q["q-connection-info"]
    assert info["answer"] == "hop-10"       # PUT /attachments/{id}
    assert "PUT /v3/{project}/attachments/{id} (+129.0 ms) answered 200" \
        in info["right"]
    assert "virDomainAttachDeviceFlags (+227.9 ms) then used it" in \
        info["right"]
    assert "returns the attachment_id" in info["wrong"]["hop-06"]
    save = q["q-why-save"]
    assert save["answer"] == "detach"
    assert "bdm.save ran at +326.1 ms, attachment_complete at +330.0 ms" \
        in save["right"]
    assert "os-complete answered 204" in save["wrong"]["reply"]
    available = q["q-available"]
    assert available["answer"] == "nothing"
    assert "the volume ends in-use" in available["right"]
    assert _items(q["q-rpc-kinds"]) == {
        "reserve_block_device_name": "CALL", "attach_volume": "CAST"}
    kinds = {item["label"]: item["right"] for item in
             q["q-rpc-kinds"]["items"]}
    assert "nova-api waited 46.2 ms" in kinds["reserve_block_device_name"]
    assert "the host's handler ran 278.4 ms" in kinds["attach_volume"]
    assert set(_items(q["q-match-calls"]).values()) == {
        "reserve_block_device_name", "attachment_create", "attach_volume",
        "get_connector_properties", "attachment_update",
        "virDomainAttachDeviceFlags", "bdm.save", "attachment_complete"}
    assert _items(q["q-match-calls"])[quiz.JOBS["attachment_update"]] == \
        "attachment_update"


def test_the_detach_quiz():
    q = _quiz(traces.detach_trace())
    info = q["q-connection-info"]
    assert info["answer"] == "bdm"
    assert "there is no attachment_update in it" in info["right"]
    assert "unplugged with it at +50.2 ms" in info["right"]
    available = q["q-available"]
    assert available["answer"] == "detach"
    assert "DELETE /v3/{project}/attachments/{id} (+277.8 ms) answered " \
        "200" in available["right"]
    assert _items(q["q-rpc-kinds"]) == {"detach_volume": "CAST"}
    assert "attachment_delete" in _items(q["q-match-calls"]).values()


def test_the_refused_detach_quiz():
    q = _quiz(traces.failed_detach_trace())
    available = q["q-available"]
    assert available["answer"] == "nothing"
    assert "os-roll_detaching) (+8100.0 ms) put it back to in-use, not " \
        "available" in available["right"]
    assert "never to available" in available["wrong"]["roll"]
    assert "roll_detaching" in _items(q["q-match-calls"]).values()


def test_the_failed_attach_quiz():
    q = _quiz(traces.failed_attach_trace())
    info = q["q-connection-info"]
    assert info["answer"] == "hop-10"
    assert "tried to wire the disk with it and failed" in info["right"]
    assert "failed at LIBRARY virDomainAttachDeviceFlags (+81.0 ms)" in \
        q["q-why-save"]["right"]
    available = q["q-available"]
    assert available["answer"] == "recovery"
    assert "the recovery after the failure" in available["right"]
    matched = set(_items(q["q-match-calls"]).values())
    assert {"attachment_delete", "bdm.destroy"} <= matched


def test_an_attach_that_never_got_connection_info():
    trace = traces.attach_trace()
    trace["hops"] = [hop for hop in trace["hops"]
                     if hop["start_ms"] < 100.0]   # up to attachment_create
    info = _quiz(trace)["q-connection-info"]
    assert info["answer"] == "none"
    assert "stopped before attachment_update answered" in info["right"]


# --- the page ----------------------------------------------------------

@pytest.fixture
def client():
    return web.create_app(traces.load, traces.recent).test_client()


def _hostile():
    trace = traces.failed_attach_trace()
    for hop in trace["hops"]:
        if hop["name"] == "os_brick get_connector_properties":
            hop["name"] += " <img src=x onerror=alert(1)>"
    return trace


@pytest.mark.parametrize("ident", list(traces.TRACES))
def test_the_quiz_page(client, ident):
    resp = client.get("/trace/%s/quiz" % ident)
    assert resp.status_code == 200
    page = resp.get_data(as_text=True)
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    # Only the page's own script, and its data block: nothing inline.
    scripts = re.findall(r"<script([^>]*)>", page)
    assert scripts == [' id="quiz-data" type="application/json"',
                       ' src="/trace/static/quiz.js"']
    assert " style=" not in page and "<style" not in page
    assert "<form" not in page and " on" + "click=" not in page
    assert 'href="/trace/%s"' % ident in page
    for secret in traces.SECRETS:
        assert secret not in page


def test_the_quiz_escapes_the_trace():
    app = web.create_app(lambda ident: copy.deepcopy(_hostile()))
    page = app.test_client().get(
        "/trace/%s/quiz" % traces.FAILED_ATTACH_TRACE_ID).get_data(
            as_text=True)
    assert "<img" not in page
    assert "os_brick get_connector_properties &lt;img src=x " \
        "onerror=alert(1)&gt;" in page
    block = page.split('type="application/json">', 1)[1].split(
        "</script>", 1)[0]
    assert "<" not in block and ">" not in block
    assert "\\u003cimg src=x" in block
    assert json.loads(block)[0]["id"] == "q-connection-info"


def test_the_trace_json_has_the_step_through_fields(client):
    body = client.get("/trace/%s.json" % traces.FAILED_ATTACH_TRACE_ID
                      ).get_json()
    assert body["failure"]["path"] == "driver-attach"
    hop = {h["id"]: h for h in body["hops"]}["hop-18"]
    assert hop["course"]["recovery"] == "attachment_delete"
    assert hop["state"]["volume"]["value"] == "available"
    assert hop["changed"] == ["volume", "attachment"]
    for secret in traces.SECRETS:
        assert secret not in json.dumps(body)


def test_the_trace_page_links_the_quiz_and_loads_its_scripts(client):
    page = client.get("/trace/%s" % traces.TRACE_ID).get_data(as_text=True)
    assert 'href="/trace/%s/quiz"' % traces.TRACE_ID in page
    assert re.findall(r'<script src="([^"]+)"', page) == [
        "/trace/static/details.js", "/trace/static/journey.js",
        "/trace/static/steps.js"]
    assert 'id="step-next"' in page and 'id="step-play"' in page
    assert " style=" not in page


@pytest.mark.parametrize("name", ["details.js", "journey.js", "steps.js",
                                  "quiz.js"])
def test_no_script_writes_html(client, name):
    script = client.get("/trace/static/%s" % name).get_data(as_text=True)
    assert "textContent" in script
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML",
                 "document.write", "eval(", "new Function", ".style"):
        assert sink not in script
