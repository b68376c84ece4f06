// The journey page's shared helpers and its details panel: a clicked
// (or stepped-to) hop's request id, status and arguments. Loaded before
// journey.js (the drawing) and steps.js (the step-through), which find
// these on window.MinistackJourney.
//
// Everything from the trace is attacker-influenced text: it only ever
// reaches the page through textContent and setAttribute, never as HTML.
(function () {
  "use strict";

  var J = window.MinistackJourney = window.MinistackJourney || {};

  function html(name, attrs, text) {
    var node = document.createElement(name);
    Object.keys(attrs || {}).forEach(function (key) {
      node.setAttribute(key, String(attrs[key]));
    });
    if (text !== undefined) { node.textContent = String(text); }
    return node;
  }

  function ms(value) {
    return (Number(value) || 0).toFixed(1) + " ms";
  }

  // A span that never stopped (its daemon died mid-hop) has no duration.
  function took(hop) {
    return hop.duration_ms === null || hop.duration_ms === undefined
      ? "unfinished" : ms(hop.duration_ms);
  }

  function row(dl, term, value) {
    if (value === null || value === undefined || value === "") { return; }
    dl.appendChild(html("dt", {}, term));
    dl.appendChild(html("dd", {"data-field": term}, value));
  }

  // Show ``hop`` (drawn as ``g``) in the details panel, selected.
  function select(g, hop, byId) {
    var old = document.querySelectorAll(".hop.selected");
    Array.prototype.forEach.call(old, function (node) {
      node.setAttribute("class", node.getAttribute("class")
                        .replace(" selected", ""));
    });
    g.setAttribute("class", g.getAttribute("class") + " selected");
    var panel = document.getElementById("hop-details");
    while (panel.firstChild) { panel.removeChild(panel.firstChild); }
    panel.setAttribute("data-hop-id", hop.id);
    panel.appendChild(html("h2", {}, hop.kind + " " + hop.name));
    if (hop.error) {
      panel.appendChild(html("p", {"class": "error-message"}, hop.error));
    }
    var server = hop.server;
    if (server && server.error) {
      panel.appendChild(html("p", {"class": "error-message"},
                             "server: " + server.error));
    }
    var dl = html("dl");
    var parent = byId[hop.parent_id];
    row(dl, "service", hop.service);
    row(dl, "host", hop.host);
    row(dl, "actor", hop.actor);
    row(dl, "from", (hop.from_actor || "user") +
                    (parent ? " (in " + parent.kind + " " + parent.name + ")"
                            : ""));
    row(dl, "phase", hop.phase);
    row(dl, "start", "+" + ms(hop.start_ms));
    row(dl, "duration", took(hop) + (server ? " (" + hop.service +
                                              "'s client)" : ""));
    if (server) {
      row(dl, "server", took(server) + " in " + server.service +
                        (server.host ? " on " + server.host : "") +
                        ", from +" + ms(server.start_ms));
    }
    row(dl, "status", hop.status);
    if (server && server.status !== hop.status) {
      row(dl, "server status", server.status);
    }
    row(dl, "request id", hop.request_id);
    if (server) { row(dl, "server request id", server.request_id); }
    row(dl, "hop id", hop.id);
    if (server) { row(dl, "server hop id", server.id); }
    panel.appendChild(dl);
    panel.appendChild(html("h3", {}, "arguments"));
    panel.appendChild(html("pre", {"class": "hop-args"},
                           JSON.stringify(hop.details || {}, null, 2)));
    var served = server && byId[server.id];
    if (served) {
      panel.appendChild(html("h3", {}, "the server's side (" +
                                       server.service + ")"));
      panel.appendChild(html("pre", {"class": "server-args"},
                             JSON.stringify(served.details || {}, null, 2)));
    }
  }

  J.html = html;
  J.ms = ms;
  J.took = took;
  J.select = select;
})();
