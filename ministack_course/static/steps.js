// The journey page's "Next step" mode: the seed's animation ("Press Next
// step to watch one message packet travel the entire path") over this
// real trace. One hop at a time, in the order the diagram draws them:
// the packet flies along the hop's arrow, the step panel says its kind,
// what the seed says of it (course.py), and the volume, attachment,
// connection_info and BDM after it (state.py: "unknown" when the trace
// does not show it). A failed trace's failure hop, then each undo step,
// are labelled as the recovery path the seed draws. Next/Previous (or
// the right/left arrow keys), Play/Pause (auto-advance), Escape back to
// the whole picture. Each lane's title shows its role when clicked (the
// seed's cast of characters).
//
// Everything from the trace is attacker-influenced text: it only ever
// reaches the page through textContent and setAttribute, never as HTML.
(function () {
  "use strict";

  var J = window.MinistackJourney;
  var html = J.html, ms = J.ms;
  var SVG = "http://www.w3.org/2000/svg";
  var FLIGHT_MS = 650, PLAY_MS = 1700;
  var FIELDS = [["volume", "volume"], ["attachment", "attachment"],
                ["connection_info", "connection_info"], ["bdm", "BDM"]];
  var data = J.data, trace = data.trace, failure = trace.failure;
  // The steps: the drawn hops (one per REST call), as journey.js draws.
  var hops = trace.hops.filter(function (hop) { return !hop.client_id; });
  var byId = {}, titles = {}, lanes = {};
  trace.hops.forEach(function (hop) { byId[hop.id] = hop; });
  data.lanes.forEach(function (lane) {
    var key = lane.lane || lane.actor;
    lanes[key] = lane;
    titles[key] = lane.title + (lane.host ? " (" + lane.host + ")" : "");
  });
  var at = 0, timer = null, frame = null, chosenLane = null;

  function $(id) { return document.getElementById(id); }
  var prevB = $("step-prev"), nextB = $("step-next"), playB = $("step-play");
  var count = $("step-count"), panel = $("step-panel");
  var rolePanel = $("lane-role");
  var intro = count.textContent;

  function clear(node) {
    while (node.firstChild) { node.removeChild(node.firstChild); }
  }

  function svg() { return $("journey-svg"); }

  function each(list, fn) { Array.prototype.forEach.call(list, fn); }

  // The drawn hop of ``hop`` (compared, never put in a selector).
  function gOf(hop) {
    var found = null;
    each(svg().querySelectorAll("g.hop"), function (g) {
      if (hop && g.getAttribute("data-hop-id") === hop.id) { found = g; }
    });
    return found;
  }

  // past / current / future on each hop while stepping.
  function mark(root) {
    root.classList.toggle("stepping", at > 0);
    each(root.querySelectorAll("g.hop"), function (g, i) {
      g.classList.remove("past", "current", "future");
      if (at > 0) {
        g.classList.add(i + 1 < at ? "past" :
                        i + 1 === at ? "current" : "future");
      }
    });
  }

  // The packet on ``g``'s arrow: flown from its tail to its head, or
  // put at the head at once (a redraw, a resize).
  function fly(root, g, hop, animate) {
    var old = root.querySelector("#packet");
    if (old) { old.parentNode.removeChild(old); }
    if (frame) { window.cancelAnimationFrame(frame); frame = null; }
    var arrow = g && g.querySelector(".arrow");
    if (!arrow) { return; }
    var dot = document.createElementNS(SVG, "circle");
    dot.setAttribute("id", "packet");
    dot.setAttribute("r", 7);
    dot.setAttribute("class", "packet kind-" +
                     String(hop.kind).toLowerCase() +
                     (hop.error ? " failed" : ""));
    dot.setAttribute("data-hop-id", hop.id);
    dot.setAttribute("data-arrived", "false");
    root.appendChild(dot);
    var length = arrow.getTotalLength();
    function place(f) {
      var point = arrow.getPointAtLength(length * f);
      dot.setAttribute("cx", point.x.toFixed(2));
      dot.setAttribute("cy", point.y.toFixed(2));
    }
    function arrived() {
      frame = null;
      place(1);
      dot.setAttribute("data-arrived", "true");
    }
    if (!animate) { arrived(); return; }
    var start = null;
    place(0);
    frame = window.requestAnimationFrame(function tick(now) {
      if (start === null) { start = now; }
      var f = Math.min(1, (now - start) / FLIGHT_MS);
      if (f >= 1) { arrived(); return; }
      place(1 - (1 - f) * (1 - f));
      frame = window.requestAnimationFrame(tick);
    });
  }

  function stateTable(hop) {
    var table = html("table", {id: "step-state", "class": "state"});
    var body = html("tbody");
    var changed = hop.changed || [];
    FIELDS.forEach(function (field) {
      var value = (hop.state || {})[field[0]] || {value: "unknown",
                                                  known: false};
      var tr = html("tr", {"data-field": field[0],
                           "class": (changed.indexOf(field[0]) >= 0 ?
                                     "changed" : "") +
                                    (value.known ? "" : " unknown")});
      tr.appendChild(html("th", {scope: "row"}, field[1]));
      var td = html("td");
      td.appendChild(html("span", {"class": "value"}, value.value));
      if (value.why) { td.appendChild(html("span", {"class": "why"},
                                           value.why)); }
      tr.appendChild(td);
      body.appendChild(tr);
    });
    table.appendChild(body);
    return table;
  }

  // The seed's recovery drawing of this trace: the failure, then each
  // undo step (the ones the trace does not show, said so).
  function recoveryBox(hop) {
    var box = html("div", {id: "recovery-path", "class": "recovery-path"});
    box.appendChild(html("h3", {}, "When it goes wrong: " +
                         (failure.title || "the failure")));
    if (failure.says) { box.appendChild(html("p", {}, failure.says)); }
    var list = html("ol");
    var origin = byId[failure.hop_id];
    var items = [{mark: "\u2716 ", text: origin.name + " failed",
                  hop: origin, cls: "failed-step"}];
    failure.steps.forEach(function (step) {
      var undo = byId[step.hop_id];
      items.push({mark: "\u21ba ", hop: undo, cls: "recovery-step" +
                  (undo ? "" : " missing"),
                  text: step.step + (undo ? ": " + undo.name + " (+" +
                                     ms(undo.start_ms) + ")"
                                          : " \u2014 " + step.note)});
    });
    items.forEach(function (item) {
      var li = html("li", {"class": item.cls +
                           (item.hop === hop ? " current" : "")});
      if (item.hop) {
        li.setAttribute("data-hop-id", item.hop.id);
        var go = html("button", {type: "button", "class": "linkish"},
                      item.mark + item.text);
        go.addEventListener("click", function () {
          pause();
          goTo(hops.indexOf(item.hop) + 1, true);
        });
        li.appendChild(go);
      } else {
        li.textContent = item.mark + item.text;
      }
      list.appendChild(li);
    });
    box.appendChild(list);
    return box;
  }

  function fill(hop) {
    var course = hop.course || {};
    clear(panel);
    panel.setAttribute("data-hop-id", hop.id);
    panel.appendChild(html("h2", {id: "step-title"},
                           "Step " + at + " of " + hops.length));
    var what = html("p", {"class": "step-hop"});
    what.appendChild(html("span", {id: "step-kind", "class": "kind kind-" +
                                   String(hop.kind).toLowerCase()},
                          hop.kind));
    what.appendChild(html("span", {id: "step-name"}, " " + hop.name));
    panel.appendChild(what);
    var from = hop.from_lane || hop.from_actor || "user";
    var to = hop.lane || hop.actor;
    panel.appendChild(html("p", {id: "step-route", "class": "hint"},
                           (titles[from] || from) + " \u2192 " +
                           (titles[to] || to) + " \u00b7 +" +
                           ms(hop.start_ms) +
                           (hop.phase ? " \u00b7 phase " + hop.phase : "")));
    if (hop.error) {
      panel.appendChild(html("p", {"class": "error-message",
                                   id: "step-error"},
                             "\u2716 failed: " + hop.error));
    }
    if (course.recovery) {
      panel.appendChild(html("p", {"class": "recovery-tag",
                                   id: "step-recovery"},
                             "\u21ba The recovery: " + course.recovery));
    }
    panel.appendChild(html("p", {id: "step-says", "class": "says"},
                           course.says || ""));
    panel.appendChild(html("h3", {}, "After this step"));
    panel.appendChild(stateTable(hop));
    if (!(hop.changed || []).length) {
      panel.appendChild(html("p", {"class": "hint", id: "step-unchanged"},
                             hop.error ? "It failed: it changed none of "
                                         + "them."
                                       : "This step changed none of them."));
    }
    if (failure && (course.failure || course.recovery)) {
      panel.appendChild(recoveryBox(hop));
    }
  }

  function goTo(n, animate) {
    at = Math.max(0, Math.min(hops.length, n));
    var root = svg(), hop = hops[at - 1];
    mark(root);
    prevB.disabled = at === 0;
    nextB.disabled = at === hops.length;
    if (!hop) {
      fly(root, null);
      panel.hidden = true;
      count.textContent = intro;
      return;
    }
    var g = gOf(hop);
    fly(root, g, hop, animate);
    count.textContent = "Step " + at + " of " + hops.length + ": " +
      hop.kind + " " + hop.name;
    fill(hop);
    panel.hidden = false;
    if (g) {
      J.select(g, hop, byId);
      g.scrollIntoView({block: "nearest", inline: "nearest"});
    }
  }

  function pause() {
    if (timer) { window.clearInterval(timer); timer = null; }
    playB.textContent = "\u25b6 Play";
    playB.setAttribute("aria-pressed", "false");
  }

  function play() {
    if (at === hops.length) { goTo(0, false); }
    playB.textContent = "\u275a\u275a Pause";
    playB.setAttribute("aria-pressed", "true");
    goTo(at + 1, true);
    timer = window.setInterval(function () {
      if (at >= hops.length) { pause(); return; }
      goTo(at + 1, true);
      if (at >= hops.length) { pause(); }
    }, PLAY_MS);
  }

  function showRole(g) {
    var lane = lanes[g.getAttribute("data-lane")];
    if (!lane || !lane.role) { return; }
    chosenLane = g.getAttribute("data-lane");
    each(svg().querySelectorAll("g.lane"), function (other) {
      other.classList.toggle("chosen", other === g);
    });
    clear(rolePanel);
    rolePanel.setAttribute("data-lane", chosenLane);
    rolePanel.appendChild(html("h2", {}, titles[chosenLane]));
    rolePanel.appendChild(html("p", {"class": "role"}, lane.role));
    rolePanel.hidden = false;
  }

  // After each drawing (the first, a resize): the lanes clickable, the
  // step and the packet where they were.
  function redrawn(root) {
    each(root.querySelectorAll("g.lane[role=button]"), function (g) {
      g.addEventListener("click", function () { showRole(g); });
      g.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          showRole(g);
        }
      });
      g.classList.toggle("chosen", g.getAttribute("data-lane") ===
                         chosenLane);
    });
    mark(root);
    if (at > 0) { fly(root, gOf(hops[at - 1]), hops[at - 1], false); }
  }

  nextB.addEventListener("click", function () { pause(); goTo(at + 1, true); });
  prevB.addEventListener("click", function () { pause(); goTo(at - 1, true); });
  playB.addEventListener("click", function () {
    if (timer) { pause(); } else { play(); }
  });
  document.addEventListener("keydown", function (event) {
    var tag = event.target && event.target.tagName;
    if (event.altKey || event.ctrlKey || event.metaKey ||
        tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") {
      return;
    }
    if (event.key === "ArrowRight") {
      event.preventDefault();
      pause();
      goTo(at + 1, true);
    } else if (event.key === "ArrowLeft") {
      event.preventDefault();
      pause();
      goTo(at - 1, true);
    } else if (event.key === "Escape" && at > 0) {
      pause();
      goTo(0, false);
    }
  });
  J.onRender.push(redrawn);
  redrawn(svg());
  goTo(0, false);
  [prevB, nextB, playB].forEach(function (button) { button.hidden = false; });
})();
