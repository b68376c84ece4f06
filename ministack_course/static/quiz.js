// The quiz of one trace (quiz.html, quiz.py): each question checked in
// the browser against the answers the page's JSON data block carries
// (nothing is sent anywhere). A choice question: its radio buttons. A
// matching question: a list per item (keyboard-accessible), and, for
// the calls of the run, chips to drag onto a job (the drop chooses the
// same list's entry). The score counts the questions answered right.
//
// Every text comes from the data block and reaches the page through
// textContent only, never as HTML.
(function () {
  "use strict";

  var questions = JSON.parse(
    document.getElementById("quiz-data").textContent);
  var results = {};

  function each(list, fn) { Array.prototype.forEach.call(list, fn); }

  function say(node, text, right) {
    node.textContent = text;
    node.classList.remove("right", "wrong");
    if (right !== null) { node.classList.add(right ? "right" : "wrong"); }
  }

  function score() {
    var keys = Object.keys(results);
    var right = keys.filter(function (key) { return results[key]; });
    document.getElementById("score").textContent =
      right.length + " of " + questions.length + " right";
  }

  function checkChoice(q, section, feedback) {
    var picked = section.querySelector("input[type=radio]:checked");
    if (!picked) { return say(feedback, "Choose an answer first.", null); }
    var right = picked.value === q.answer;
    say(feedback, right ? q.right : (q.wrong[picked.value] || "No."), right);
    return right;
  }

  function checkMatch(q, section, feedback) {
    var good = 0, answered = 0;
    q.items.forEach(function (item) {
      each(section.querySelectorAll("tr.item"), function (tr) {
        if (tr.getAttribute("data-item") !== item.id) { return; }
        var value = tr.querySelector("select").value;
        var cell = tr.querySelector("td.feedback");
        tr.classList.remove("right", "wrong");
        if (!value) { cell.textContent = ""; return; }
        answered += 1;
        var right = value === item.answer;
        good += right ? 1 : 0;
        tr.classList.add(right ? "right" : "wrong");
        cell.textContent = right ? "\u2714 " + item.right
          : "\u2716 " + (item.wrong[value] || "No.");
      });
    });
    if (!answered) { return say(feedback, "Choose an answer first.", null); }
    var all = good === q.items.length;
    say(feedback, good + " of " + q.items.length + " right" +
        (all ? ": well done." : ": try the red ones again."), all);
    return all;
  }

  // A chip dropped on an item's row chooses it in that row's list.
  function dragAndDrop(section) {
    each(section.querySelectorAll(".chip"), function (chip) {
      chip.addEventListener("dragstart", function (event) {
        event.dataTransfer.setData("text/plain",
                                   chip.getAttribute("data-value"));
        event.dataTransfer.effectAllowed = "copy";
      });
    });
    each(section.querySelectorAll("tr.item"), function (tr) {
      tr.addEventListener("dragover", function (event) {
        event.preventDefault();
        tr.classList.add("over");
      });
      tr.addEventListener("dragleave", function () {
        tr.classList.remove("over");
      });
      tr.addEventListener("drop", function (event) {
        event.preventDefault();
        tr.classList.remove("over");
        var value = event.dataTransfer.getData("text/plain");
        var select = tr.querySelector("select");
        each(select.options, function (option) {
          if (option.value === value) { select.value = value; }
        });
        select.dispatchEvent(new Event("change", {bubbles: true}));
      });
    });
    section.addEventListener("change", function () {
      var used = [];
      each(section.querySelectorAll("select"), function (select) {
        used.push(select.value);
      });
      each(section.querySelectorAll(".chip"), function (chip) {
        chip.classList.toggle(
          "placed", used.indexOf(chip.getAttribute("data-value")) >= 0);
      });
    });
  }

  questions.forEach(function (q) {
    var section = document.getElementById(q.id);
    if (!section) { return; }
    var feedback = section.querySelector("p.feedback");
    if (q.kind === "match") { dragAndDrop(section); }
    section.querySelector("button.check").addEventListener(
      "click", function () {
        var right = q.kind === "choice" ? checkChoice(q, section, feedback)
                                        : checkMatch(q, section, feedback);
        if (right === undefined) { return; }
        results[q.id] = right;
        section.classList.remove("right", "wrong");
        section.classList.add(right ? "right" : "wrong");
        section.setAttribute("data-result", right ? "right" : "wrong");
        score();
      });
  });
})();
