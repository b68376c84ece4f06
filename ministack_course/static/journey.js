// The journey page's diagram: one trace drawn as the seed's diagram
// (lanes per actor, one arrow per hop, the phases of the trace's journey,
// attach or detach, as bands). A REST call is one arrow, the caller's
// lane to Cinder's, with the client's and the server's time (hops.py:
// the server's side has "client_id", the client's hop its "server").
// The compute's lane is titled with its host, one lane per host when the
// trace reached several (lanes.py: each lane's key is "lane", each hop's
// arrow runs from its "from_lane" to its "lane").
// The lanes share the diagram's width (at least MIN_LANE_W each, under
// which the diagram scrolls in its box), and are laid out again when
// the window is resized. A recovery hop (the undo steps after a
// failure: state.py) is labelled as the recovery under its arrow.
// details.js (loaded first) has the details panel; steps.js steps
// through the drawing (its hooks: MinistackJourney.onRender).
//
// Everything from the trace is attacker-influenced text: it only ever
// reaches the page through textContent and setAttribute, never as HTML.
(function () {
  "use strict";

  var J = window.MinistackJourney;
  var ms = J.ms, took = J.took;
  var SVG = "http://www.w3.org/2000/svg";
  var LEFT = 118, TOP = 64, ROW_H = 46, RIGHT = 12;
  var MIN_LANE_W = 92, MAX_LANE_W = 150;
  var LABEL_MAX = 60, ERROR_MAX = 72, HOST_CHAR_W = 6;

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (key) {
      node.setAttribute(key, String(attrs[key]));
    });
    if (text !== undefined) { node.textContent = String(text); }
    return node;
  }

  function short(text, max) {
    text = String(text === null || text === undefined ? "" : text);
    return text.length > max ? text.slice(0, max - 1) + "\u2026" : text;
  }

  // A long name is cut in its middle part, never in the action it ends
  // with ("... (os-roll_detaching)"): that is what the hop did.
  function shortName(name, max) {
    name = String(name);
    max = max || LABEL_MAX;
    var m = /^(.*?)( \([^()]*\))$/.exec(name);
    var tail = m ? m[2] : "", head = m ? m[1] : name;
    return short(head, Math.max(max - tail.length, 16)) + tail;
  }

  // A lane's key: what hops name in "lane"/"from_lane" (its actor, or
  // "nova-compute@<host>" when the compute's lane is split by host).
  function laneOf(lane) {
    return lane.lane || lane.actor;
  }

  // The arrow's time: a REST call's client time, then its server's.
  function timing(hop) {
    var text = took(hop);
    if (hop.server) { text += " \u00b7 server " + took(hop.server); }
    var status = hop.status;
    if ((status === null || status === undefined) && hop.server) {
      status = hop.server.status;
    }
    if (status !== null && status !== undefined) {
      text += " \u00b7 " + status;
    }
    return text;
  }

  // The lane width that fits ``lanes`` in ``available`` pixels.
  function laneWidth(lanes, available) {
    var fit = Math.floor((available - LEFT - RIGHT) / lanes.length);
    return Math.max(MIN_LANE_W, Math.min(MAX_LANE_W, fit));
  }

  // What the label says besides the name: the action of a Cinder action
  // call (os-complete, os-roll_detaching...), when the name is a path.
  function action(hop) {
    var details = hop.details || {};
    var act = details.action;
    if (typeof act === "string" && act && String(hop.name).indexOf(act) < 0) {
      return " (" + act + ")";
    }
    return "";
  }

  function draw(data, available) {
    var trace = data.trace, lanes = data.lanes;
    var index = {}, byId = {};
    lanes.forEach(function (lane, i) { index[laneOf(lane)] = i; });
    trace.hops.forEach(function (hop) { byId[hop.id] = hop; });
    // One arrow per REST call: the server's side is drawn by its client.
    var hops = trace.hops.filter(function (hop) { return !hop.client_id; });
    var LANE_W = laneWidth(lanes, available);
    var width = LEFT + lanes.length * LANE_W + RIGHT;
    var height = TOP + hops.length * ROW_H + 24;
    var svg = el("svg", {width: width, height: height, id: "journey-svg",
                         viewBox: "0 0 " + width + " " + height,
                         role: "img", "aria-label": "hops of the trace"});
    var defs = el("defs");
    ["ok", "failed"].forEach(function (name) {
      var marker = el("marker", {id: "arrow-" + name, viewBox: "0 0 10 10",
                                 refX: 9, refY: 5, markerWidth: 7,
                                 markerHeight: 7, orient: "auto"});
      marker.appendChild(el("path", {d: "M0,0 L10,5 L0,10 z",
                                     "class": "head " + name}));
      defs.appendChild(marker);
    });
    svg.appendChild(defs);

    function x(lane) {
      var i = index[lane];
      if (i === undefined) { i = 0; }
      return LEFT + i * LANE_W + LANE_W / 2;
    }
    function rowY(i) { return TOP + i * ROW_H; }

    // The phases: each run of consecutive hops of one phase is a band.
    var bands = el("g", {"class": "phases"});
    var start = 0;
    for (var i = 1; i <= hops.length; i++) {
      var phase = hops[start].phase;
      if (i < hops.length && hops[i].phase === phase) { continue; }
      if (phase) {
        var nth = data.phases.indexOf(phase);
        var band = el("g", {"class": "phase", "data-phase": phase});
        band.appendChild(el("rect", {
          x: 4, y: rowY(start) + 2, width: width - 8,
          height: (i - start) * ROW_H - 4,
          "class": "band band-" + (phase === "recovery" ? "recovery" :
                                   nth < 0 ? "other" : nth)}));
        band.appendChild(el("text", {x: 10, y: rowY(start) + 16,
                                     "class": "phase-label"},
                            phase === "recovery" ? "\u21ba recovery" :
                            (nth < 0 ? "" : (nth + 1) + " ") + phase));
        bands.appendChild(band);
      }
      start = i;
    }
    svg.appendChild(bands);

    // The lanes.
    var lanesG = el("g", {"class": "lanes"});
    lanes.forEach(function (lane) {
      var g = el("g", {"class": "lane", "data-actor": lane.actor,
                       "data-lane": laneOf(lane)});
      if (lane.role) {      // the seed's cast: click for its role
        g.setAttribute("tabindex", 0);
        g.setAttribute("role", "button");
        g.setAttribute("aria-label", lane.title + (lane.host ? " (" +
                       lane.host + ")" : "") + ": show its role");
      }
      var cx = x(laneOf(lane));
      g.appendChild(el("rect", {x: cx - LANE_W / 2 + 4, y: 8,
                                width: LANE_W - 8, height: 28, rx: 6,
                                "class": "lane-head"}));
      if (lane.host) {
        // "nova-compute (compute2)": the host on a line of its own.
        var full = lane.title + " (" + lane.host + ")";
        g.setAttribute("data-host", lane.host);
        g.appendChild(el("title", {}, full));
        var head = el("text", {x: cx, y: 20, "class": "lane-title",
                               "aria-label": full});
        head.appendChild(el("tspan", {x: cx, y: 20}, lane.title));
        head.appendChild(el("tspan", {x: cx, y: 32, "class": "lane-host"},
                            " (" + short(lane.host, Math.max(
                              6, Math.floor((LANE_W - 14) / HOST_CHAR_W) - 2))
                            + ")"));
        g.appendChild(head);
      } else {
        g.appendChild(el("text", {x: cx, y: 27, "class": "lane-title"},
                         lane.title));
      }
      g.appendChild(el("line", {x1: cx, y1: 36, x2: cx, y2: height - 8,
                                "class": "lane-line"}));
      lanesG.appendChild(g);
    });
    svg.appendChild(lanesG);

    // The hops.
    var hopsG = el("g", {"class": "hops"});
    hops.forEach(function (hop, row) {
      var from = hop.from_lane || hop.from_actor || "user";
      var to = hop.lane || hop.actor;
      var y = rowY(row) + ROW_H / 2 + 6;
      var failed = !!hop.error;
      var g = el("g", {"class": "hop" + (failed ? " failed" : ""),
                       "data-hop-id": hop.id, "data-kind": hop.kind,
                       "data-actor": hop.actor,
                       "data-from": hop.from_actor || "user",
                       "data-lane": to, "data-from-lane": from,
                       "data-host": hop.host || "",
                       "data-name": hop.name, "data-phase": hop.phase || "",
                       tabindex: 0, role: "button"});
      if (hop.server) { g.setAttribute("data-server-id", hop.server.id); }
      g.appendChild(el("title", {}, hop.kind + " " + hop.name +
                       (failed ? " \u2014 " + hop.error : "")));
      g.appendChild(el("rect", {x: LEFT - 6, y: rowY(row) + 2,
                                width: width - LEFT - RIGHT + 12,
                                height: ROW_H - 4, "class": "hit"}));
      g.appendChild(el("text", {x: LEFT - 12, y: y + 4,
                                "class": "offset"},
                       "+" + ms(hop.start_ms)));
      var x1 = x(from), x2 = x(to);
      var marker = "url(#arrow-" + (failed ? "failed" : "ok") + ")";
      if (x1 === x2) {
        g.appendChild(el("path", {
          d: "M" + x1 + "," + (y - 6) + " h26 v12 h-24",
          "class": "arrow kind-" + String(hop.kind).toLowerCase(),
          "marker-end": marker}));
      } else {
        var dir = x2 > x1 ? 1 : -1;
        g.appendChild(el("line", {
          x1: x1 + 4 * dir, y1: y, x2: x2 - 4 * dir, y2: y,
          "class": "arrow kind-" + String(hop.kind).toLowerCase(),
          "marker-end": marker}));
      }
      if ((hop.kind === "CALL" || hop.kind === "CAST") &&
          hop.from_actor !== "rabbitmq" && hop.actor !== "rabbitmq" &&
          index.rabbitmq !== undefined) {
        // RPC travels through the broker even when the trace has no
        // span of its own for it: the packet passes RabbitMQ.
        g.appendChild(el("circle", {cx: x("rabbitmq"), cy: y, r: 4,
                                    "class": "broker"}));
      }
      var labelX = Math.max(Math.min(x1, x2), LEFT) + (x1 === x2 ? 34 : 8);
      var label = el("text", {x: labelX, y: y - 6, "class": "label"});
      label.appendChild(el("tspan", {"class": "kind-tag"}, hop.kind + " "));
      label.appendChild(el("tspan", {"class": "name",
                                     "data-full": hop.name},
                           shortName(hop.name)));
      if (action(hop)) {
        label.appendChild(el("tspan", {"class": "action"}, action(hop)));
      }
      label.appendChild(el("tspan", {"class": "time"}, " " + timing(hop)));
      g.appendChild(label);
      var course = hop.course || {};
      if (failed) {
        g.appendChild(el("text", {x: labelX, y: y + 16,
                                  "class": "error-label"},
                         "\u2716 " + short(hop.error, ERROR_MAX)));
      } else if (course.recovery) {
        g.setAttribute("class", g.getAttribute("class") + " recovery");
        g.setAttribute("data-recovery", course.recovery);
        g.appendChild(el("text", {x: labelX, y: y + 16,
                                  "class": "recovery-label"},
                         "\u21ba recovery: " + course.recovery));
      }
      if (course.failure) { g.setAttribute("data-failure", "true"); }
      g.addEventListener("click", function () { J.select(g, hop, byId); });
      g.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          J.select(g, hop, byId);
        }
      });
      hopsG.appendChild(g);
    });
    svg.appendChild(hopsG);
    return svg;
  }

  // Keep each label inside the diagram: one that would run off the
  // right edge ends at it instead, and one longer than the diagram is
  // wide loses the middle of its name (never its action or its time).
  function fitLabels(svg) {
    var width = svg.width.baseVal.value, right = width - RIGHT / 2;
    var labels = svg.querySelectorAll(".label, .error-label, " +
                                      ".recovery-label");
    Array.prototype.forEach.call(labels, function (label) {
      var x = Number(label.getAttribute("x"));
      var len = label.getComputedTextLength();
      if (x + len <= right) { return; }
      var name = label.querySelector(".name");
      var full = name ? name.getAttribute("data-full") : label.textContent;
      var max = (name || label).textContent.length;
      while (LEFT + len > right && max > 16) {
        max = Math.max(16, max - Math.ceil((LEFT + len - right) / 6));
        if (name) {
          name.textContent = shortName(full, max);
        } else {
          label.textContent = short(full, max);
        }
        len = label.getComputedTextLength();
      }
      label.setAttribute("x", Math.max(LEFT, right - len));
    });
  }

  // A lane title wider than its lane's head (nine lanes at 1400 px: two
  // compute hosts) is narrowed to fit, each line on its own.
  function fitLaneTitles(svg) {
    var heads = svg.querySelectorAll("g.lane");
    Array.prototype.forEach.call(heads, function (g) {
      var room = g.querySelector("rect.lane-head").width.baseVal.value - 8;
      var title = g.querySelector("text.lane-title");
      var lines = title.querySelectorAll("tspan");
      Array.prototype.forEach.call(lines.length ? lines : [title],
                                   function (line) {
        if (line.getComputedTextLength() > room) {
          line.setAttribute("textLength", room);
          line.setAttribute("lengthAdjust", "spacingAndGlyphs");
        }
      });
    });
  }

  var source = document.getElementById("trace-data");
  var data = JSON.parse(source.textContent);
  var diagram = document.getElementById("diagram");

  // Draw for the diagram's width now, and again when it changes (the
  // selected hop stays selected).
  function render() {
    var panel = document.getElementById("hop-details");
    var selected = document.querySelector(".hop.selected") &&
      panel.getAttribute("data-hop-id");
    var old = document.getElementById("journey-svg");
    if (old) { diagram.removeChild(old); }
    drawnAt = diagram.clientWidth;
    var svg = draw(data, drawnAt);
    diagram.appendChild(svg);
    fitLaneTitles(svg);
    fitLabels(svg);
    if (selected) {
      var hops = svg.querySelectorAll(".hop");
      Array.prototype.forEach.call(hops, function (g) {
        if (g.getAttribute("data-hop-id") === selected) {
          g.setAttribute("class", g.getAttribute("class") + " selected");
        }
      });
    }
    J.onRender.forEach(function (hook) { hook(svg); });
  }

  // Lay out again when the diagram's width changes: a window resized,
  // or the page's scroll bar appearing once the drawing made it tall.
  function refit() {
    if (laneWidth(data.lanes, diagram.clientWidth) !==
        laneWidth(data.lanes, drawnAt)) {
      render();
    }
  }

  var drawnAt = 0;
  J.data = data;
  J.onRender = J.onRender || [];
  render();
  if (window.ResizeObserver) {
    new window.ResizeObserver(refit).observe(diagram);
  } else {
    window.addEventListener("resize", refit);
  }
})();
