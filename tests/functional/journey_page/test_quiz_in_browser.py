"""Check yourself (``/trace/<id>/quiz``) in headless chromium over the
fixture traces: a question answered wrong then right, with this run's
feedback; the CAST-or-CALL question; the matching exercise by its lists
(the keyboard) and by dragging a call onto its job; the score; no
console error under the page's CSP. Screenshots in ``browser.ARTIFACTS``.
"""

import pytest

from ministack_course import quiz
from ministack_course import web
from tests.functional.journey_page import browser
from tests.support import journey_traces as traces


@pytest.fixture(scope="module")
def driver():
    driver = browser.chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def url():
    with browser.served(web.create_app(traces.load, traces.recent)) as base:
        yield base


def _questions(ident):
    return {q["id"]: q for q in quiz.questions(
        web.view(traces.load(ident))["trace"])}


def _open(driver, url, ident):
    driver.set_window_size(browser.WIDTH, browser.HEIGHT)
    driver.get("%s/trace/%s/quiz" % (url, ident))


def _section(driver, ident):
    return driver.find_element("id", ident)


def _choose(section, value):
    [radio] = [r for r in section.find_elements("css selector",
                                                "input[type=radio]")
               if r.get_attribute("value") == value]
    radio.click()


def _check(section):
    section.find_element("css selector", "button.check").click()
    feedback = section.find_element("css selector", "p.feedback")
    return feedback.text, feedback.get_attribute("class").split()


def _select(section, item_id, value):
    from selenium.webdriver.support.ui import Select
    [select] = [s for s in section.find_elements("css selector", "select")
                if s.get_attribute("data-item") == item_id]
    Select(select).select_by_value(value)
    return select


def _score(driver):
    return driver.find_element("id", "score").text


def test_a_question_answered_wrong_then_right(driver, url):
    _open(driver, url, traces.TRACE_ID)
    q = _questions(traces.TRACE_ID)["q-connection-info"]
    section = _section(driver, "q-connection-info")
    assert _check(section) == ("Choose an answer first.", ["feedback"])
    assert _score(driver) == "5 questions"
    _choose(section, "hop-06")         # POST /attachments
    text, classes = _check(section)
    assert text == q["wrong"]["hop-06"]
    assert "wrong" in classes
    assert section.get_attribute("data-result") == "wrong"
    assert _score(driver) == "0 of 5 right"
    _choose(section, "hop-10")         # PUT /attachments/{id}
    text, classes = _check(section)
    assert text == q["right"]
    assert "+129.0 ms" in text and "right" in classes
    assert "right" in section.get_attribute("class")
    assert _score(driver) == "1 of 5 right"
    why = _section(driver, "q-why-save")
    _choose(why, "detach")
    assert "bdm.save ran at +326.1 ms" in _check(why)[0]
    assert _score(driver) == "2 of 5 right"
    assert browser.console_errors(driver) == []


def test_cast_or_call(driver, url):
    _open(driver, url, traces.TRACE_ID)
    section = _section(driver, "q-rpc-kinds")
    _select(section, "rpc-0", "CALL")       # reserve_block_device_name
    _select(section, "rpc-1", "CALL")       # attach_volume: wrong
    text, classes = _check(section)
    assert text == "1 of 2 right: try the red ones again." and \
        "wrong" in classes
    rows = section.find_elements("css selector", "tr.item")
    assert "right" in rows[0].get_attribute("class")
    assert rows[1].find_element("css selector", "td.feedback").text \
        .startswith("\u2716 No: attach_volume was a CAST")
    _select(section, "rpc-1", "CAST")
    assert _check(section) == ("2 of 2 right: well done.",
                               ["feedback", "right"])


def test_the_matching_exercise_by_keyboard_and_by_drag(driver, url):
    _open(driver, url, traces.DETACH_TRACE_ID)
    q = _questions(traces.DETACH_TRACE_ID)["q-match-calls"]
    section = _section(driver, "q-match-calls")
    items = q["items"]
    # The keyboard: focus a job's list and type the call's name.
    [first] = [s for s in section.find_elements("css selector", "select")
               if s.get_attribute("data-item") == items[0]["id"]]
    first.send_keys(items[0]["answer"])
    assert first.get_attribute("value") == items[0]["answer"]
    # Drag a call's chip onto a job (HTML5 drag and drop events).
    chip = [c for c in section.find_elements("css selector", ".chip")
            if c.get_attribute("data-value") == items[1]["answer"]][0]
    row = [r for r in section.find_elements("css selector", "tr.item")
           if r.get_attribute("data-item") == items[1]["id"]][0]
    driver.execute_script("""
        var chip = arguments[0], row = arguments[1];
        var data = new DataTransfer();
        chip.dispatchEvent(new DragEvent('dragstart',
            {bubbles: true, dataTransfer: data}));
        row.dispatchEvent(new DragEvent('dragover',
            {bubbles: true, cancelable: true, dataTransfer: data}));
        row.dispatchEvent(new DragEvent('drop',
            {bubbles: true, cancelable: true, dataTransfer: data}));
    """, chip, row)
    assert row.find_element("css selector", "select").get_attribute(
        "value") == items[1]["answer"]
    assert "placed" in chip.get_attribute("class")
    # One wrong: the score says so, its row says why.
    wrong = items[3]["answer"] if items[2]["answer"] != items[3]["answer"] \
        else items[4]["answer"]
    _select(section, items[2]["id"], wrong)
    for item in items[3:]:
        _select(section, item["id"], item["answer"])
    text, classes = _check(section)
    assert text == "%d of %d right: try the red ones again." % (
        len(items) - 1, len(items))
    bad = [r for r in section.find_elements("css selector", "tr.item")
           if "wrong" in r.get_attribute("class")]
    assert [r.get_attribute("data-item") for r in bad] == [items[2]["id"]]
    assert bad[0].find_element("css selector", "td.feedback").text == \
        "\u2716 " + items[2]["wrong"][wrong]
    _select(section, items[2]["id"], items[2]["answer"])
    assert _check(section)[0] == "%d of %d right: well done." % (
        len(items), len(items))
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-quiz-fixture-detach")


@pytest.mark.parametrize("ident", [traces.FAILED_ATTACH_TRACE_ID,
                                   traces.FAILED_TRACE_ID])
def test_every_question_answered_right(driver, url, ident):
    """Each question of a failed trace, answered from its data: the
    score is full."""
    _open(driver, url, ident)
    questions = _questions(ident)
    for q in questions.values():
        section = _section(driver, q["id"])
        if q["kind"] == "choice":
            _choose(section, q["answer"])
        else:
            for item in q["items"]:
                _select(section, item["id"], item["answer"])
        assert "right" in _check(section)[1], q["id"]
    assert _score(driver) == "%d of %d right" % (len(questions),
                                                 len(questions))
    available = _section(driver, "q-available").find_element(
        "css selector", "p.feedback").text
    assert available == questions["q-available"]["right"]
    assert browser.console_errors(driver) == []
    browser.screenshot(driver, "trace-quiz-fixture-%s" % ident[:8])


def test_the_journey_page_links_its_quiz(driver, url):
    driver.get("%s/trace/%s" % (url, traces.TRACE_ID))
    driver.find_element("id", "quiz-link").click()
    assert driver.current_url.endswith("/trace/%s/quiz" % traces.TRACE_ID)
    driver.find_element("id", "journey-link").click()
    assert driver.current_url.endswith("/trace/%s" % traces.TRACE_ID)
