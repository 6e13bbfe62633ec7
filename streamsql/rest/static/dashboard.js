/* streamsql dashboard: polls the REST API once a second and draws the job graph with
   dagre's layout (vendored, static/dagre.min.js); no other dependency, no network. */
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.search);
  // the token comes from the page address (#token=... keeps it out of server logs) and is
  // sent in the Authorization header only
  var token = new URLSearchParams(window.location.hash.slice(1)).get("token") || params.get("token");
  var NODE_W = 250, NODE_H = 96, SVG_NS = "http://www.w3.org/2000/svg";
  var state = { job: params.get("job"), layoutKey: null };

  function api(path) {
    var headers = token ? { Authorization: "Bearer " + token } : {};
    return fetch(path, { headers: headers, cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error(path + ": HTTP " + r.status); }
      return r.json();
    });
  }

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG_NS, name);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }

  function fmtRate(v) {
    if (v >= 1e6) { return (v / 1e6).toFixed(1) + "M"; }
    if (v >= 1e3) { return (v / 1e3).toFixed(1) + "k"; }
    return (Math.round(v * 10) / 10).toString();
  }

  function fmtWatermark(v) {
    if (v === null || v === undefined || v <= -9.2e18) { return "none"; }
    if (v >= 9.2e18) { return "end of input"; }
    return new Date(v).toISOString().replace("T", " ").replace("Z", "");
  }

  function short(text, n) { return text.length > n ? text.slice(0, n - 1) + "\u2026" : text; }

  function layout(vertices, maxWidth) {
    // Left to right when it fits the page at full size, else top to bottom.
    var g = layoutAs(vertices, "LR");
    return g.graph().width <= maxWidth ? g : layoutAs(vertices, "TB");
  }

  function layoutAs(vertices, rankdir) {
    var g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: rankdir, nodesep: 24, ranksep: 36, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(function () { return {}; });
    vertices.forEach(function (v) { g.setNode(v.id, { width: NODE_W, height: NODE_H }); });
    vertices.forEach(function (v) {
      (v.inputs || []).forEach(function (src) { g.setEdge(src, v.id); });
    });
    dagre.layout(g);
    return g;
  }

  function drawGraph(job) {
    var svg = document.getElementById("graph");
    var inputs = {};
    job.plan.nodes.forEach(function (n) { inputs[n.id] = n.inputs.map(function (i) { return i.id; }); });
    var vertices = job.vertices.map(function (v) { return { id: v.id, inputs: inputs[v.id] || [], v: v }; });
    var key = job.jid + ":" + vertices.map(function (v) { return v.id; }).join(",");
    if (key !== state.layoutKey) {
      state.layoutKey = key;
      while (svg.firstChild) { svg.removeChild(svg.firstChild); }
      var defs = el("defs", {}, svg);
      var marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
        markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
      el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#777" }, marker);
      var g = layout(vertices, svg.parentNode.clientWidth - 24);
      var size = g.graph();
      svg.setAttribute("viewBox", "0 0 " + size.width + " " + size.height);
      svg.style.width = size.width + "px";
      svg.style.height = size.height + "px";
      g.edges().forEach(function (e) {
        var pts = g.edge(e).points;
        var d = "M" + pts.map(function (p) { return p.x + "," + p.y; }).join(" L");
        el("path", { "class": "edge", d: d, "marker-end": "url(#arrow)" }, svg);
      });
      vertices.forEach(function (v) {
        var pos = g.node(v.id);
        var grp = el("g", { "class": "node", id: "node-" + v.id, "data-vertex-id": v.id,
          "data-operator": v.v.operator,
          transform: "translate(" + (pos.x - NODE_W / 2) + "," + (pos.y - NODE_H / 2) + ")" }, svg);
        el("rect", { "class": "box", width: NODE_W, height: NODE_H }, grp);
        el("rect", { "class": "busy", x: 0, y: NODE_H - 5, width: 0, height: 5 }, grp);
        var title = el("text", { "class": "title", x: 8, y: 16 }, grp);
        title.textContent = v.v.operator + "  (p=" + v.v.parallelism + ")";
        var label = el("text", { "class": "label", x: 8, y: 31 }, grp);
        label.textContent = short(v.v.name, 34);
        var tip = el("title", {}, grp);
        tip.textContent = v.v.name;
        ["rows", "rates", "watermark", "pressure"].forEach(function (cls, i) {
          el("text", { "class": cls, x: 8, y: 47 + i * 13 }, grp);
        });
      });
    }
    job.vertices.forEach(function (v) {
      var grp = document.getElementById("node-" + v.id);
      if (!grp) { return; }
      var m = v.metrics;
      var bp = (m.backPressuredTimeMsPerSecond || 0) / 1000, busy = (m.busyTimeMsPerSecond || 0) / 1000;
      grp.setAttribute("data-rows-in", m.numRecordsIn);
      grp.setAttribute("data-rows-out", m.numRecordsOut);
      grp.setAttribute("data-backpressure", bp.toFixed(3));
      grp.querySelector("rect.box").setAttribute("fill", "hsl(" + Math.round(120 * (1 - bp)) + ", 65%, " + (85 - 10 * bp) + "%)");
      grp.querySelector("rect.busy").setAttribute("width", Math.round(NODE_W * busy));
      grp.querySelector("text.rows").textContent = "rows in " + m.numRecordsIn + "  out " + m.numRecordsOut;
      grp.querySelector("text.rates").textContent = "rows/s " + fmtRate(m.numRecordsInPerSecond) + " \u2192 " + fmtRate(m.numRecordsOutPerSecond);
      grp.querySelector("text.watermark").textContent = "wm " + fmtWatermark(m.currentInputWatermark);
      grp.querySelector("text.pressure").textContent = "busy " + Math.round(busy * 100) + "%  backpressured " +
        Math.round(bp * 100) + "%" + (m.numLateRecordsDropped ? "  late " + m.numLateRecordsDropped : "");
    });
  }

  function drawCheckpoints(doc) {
    var c = doc.counts;
    document.getElementById("checkpoint-counts").textContent =
      "completed " + c.completed + ", failed " + c.failed + ", in progress " + c.in_progress +
      (doc.latest.restored ? ", restored from " + doc.latest.restored.external_path : "");
    var body = document.querySelector("#checkpoints tbody");
    while (body.firstChild) { body.removeChild(body.firstChild); }
    doc.history.slice(0, 10).forEach(function (h) {
      var tr = document.createElement("tr");
      [h.id, h.checkpoint_type + (h.is_incremental ? " (incremental)" : " (full)"), h.status,
       new Date(h.trigger_timestamp).toLocaleTimeString(),
       h.end_to_end_duration === null ? "" : h.end_to_end_duration + " ms",
       h.state_size + " B", h.external_path || h.failure_message || ""].forEach(function (val, i) {
        var td = document.createElement("td");
        td.textContent = val;
        if (i === 2) { td.className = h.status; }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function refreshJobs() {
    return api("jobs/overview").then(function (doc) {
      var sel = document.getElementById("job-select");
      var jobs = doc.jobs.slice().sort(function (a, b) { return b["start-time"] - a["start-time"]; });
      if (!state.job && jobs.length) {
        var running = jobs.filter(function (j) { return j.state === "RUNNING"; });
        state.job = (running[0] || jobs[0]).jid;
      }
      var ids = jobs.map(function (j) { return j.jid; }).join(",");
      if (sel.getAttribute("data-ids") !== ids) {
        sel.setAttribute("data-ids", ids);
        while (sel.firstChild) { sel.removeChild(sel.firstChild); }
        jobs.forEach(function (j) {
          var o = document.createElement("option");
          o.value = j.jid;
          o.textContent = j.name + " (" + j.jid.slice(-6) + ")";
          sel.appendChild(o);
        });
      }
      sel.value = state.job || "";
    });
  }

  function refresh() {
    refreshJobs().then(function () {
      if (!state.job) { return null; }
      return Promise.all([api("jobs/" + state.job), api("jobs/" + state.job + "/checkpoints")]);
    }).then(function (docs) {
      if (!docs) { return; }
      var job = docs[0];
      var badge = document.getElementById("job-state");
      badge.textContent = job.state;
      badge.className = "state " + job.state;
      document.getElementById("job-duration").textContent = Math.round(job.duration / 1000) + " s";
      drawGraph(job);
      drawCheckpoints(docs[1]);
      document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
      document.body.setAttribute("data-refreshes", String(Number(document.body.getAttribute("data-refreshes") || 0) + 1));
    }).catch(function (err) {
      document.getElementById("updated").textContent = String(err);
    });
  }

  document.getElementById("job-select").addEventListener("change", function (e) {
    state.job = e.target.value;
    refresh();
  });
  refresh();
  setInterval(refresh, 1000);
})();
