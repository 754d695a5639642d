// CoMMET report: tables laid out to fit the window, and the transcripts drawn from their embedded data.
"use strict";
(function () {
  // ------------------------------------------------------------------ tables
  // Each table takes the first layout that fits, as in the terminal: as it is; transposed (one column per
  // row, numbered, with a legend); else one small table per row. A table too long for either scrolls. One small
  // table per row costs little (the wrong answers of a run of the bundled sample are 85 rows, one per "why"
  // question among them): only a table of hundreds of rows scrolls rather than run on for pages.
  var MAX_TRANSPOSED_ROWS = 30, MAX_CARD_ROWS = 400;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function fill(node, cell) {
    for (var i = 0; i < cell.childNodes.length; i++) { node.appendChild(cell.childNodes[i].cloneNode(true)); }
    return node;
  }

  function copy(cell, tag, scope) {
    var node = element(tag, cell.className);
    if (scope) { node.scope = scope; }
    return fill(node, cell);
  }

  function transposed(table) {
    var head = table.tHead.rows[0].cells, rows = table.tBodies[0].rows;
    var box = element("div", "alt transposed"), legend = element("ol");
    var out = element("table"), headRow = out.createTHead().insertRow(), body = out.createTBody();
    headRow.appendChild(copy(head[0], "th", "col"));
    for (var r = 0; r < rows.length; r++) {
      var number = "#" + (r + 1), label = rows[r].cells[0].textContent;
      var th = element("th", "", number);
      th.scope = "col";
      th.title = label;
      headRow.appendChild(th);
      legend.appendChild(element("li", "", number + ": " + label));
    }
    for (var c = 1; c < head.length; c++) {
      var tr = body.insertRow();
      tr.appendChild(copy(head[c], "th", "row"));
      for (var k = 0; k < rows.length; k++) { tr.appendChild(copy(rows[k].cells[c], "td")); }
    }
    legend.setAttribute("aria-label", "Columns #1 to #" + rows.length);
    box.appendChild(legend);
    box.appendChild(out);
    return box;
  }

  function cards(table) {
    var head = table.tHead.rows[0].cells, rows = table.tBodies[0].rows, box = element("div", "alt cards");
    for (var r = 0; r < rows.length; r++) {
      var card = element("table");
      fill(card.createCaption(), rows[r].cells[0]);
      var body = card.createTBody();
      for (var c = 1; c < head.length; c++) {
        var tr = body.insertRow();
        tr.appendChild(copy(head[c], "th", "row"));
        tr.appendChild(copy(rows[r].cells[c], "td"));
      }
      box.appendChild(card);
    }
    return box;
  }

  function alternative(block, kind, make) {
    var made = block.querySelector(".alt." + kind);
    if (!made) { made = make(block.querySelector(".scroll > table")); block.appendChild(made); }
    return made;
  }

  function natural(table) {
    // the table's width with nothing wrapped but what must wrap (what it takes when given all the room it wants)
    table.style.width = "max-content";
    var width = table.offsetWidth;
    table.style.width = "";
    return width;
  }

  function fit(block) {
    // as it is, or transposed, when either fits with nothing wrapped; else whichever of the two fits with its
    // text wrapped and takes the least height; else one small table per row; else as it is, scrolling
    var region = block.querySelector(".scroll"), table = region.querySelector("table");
    var hint = block.querySelector(".scroll-hint"), rows = table.tBodies[0].rows.length;
    block.classList.remove("as-transposed", "as-cards");
    hint.hidden = true;
    var room = block.clientWidth;
    if (natural(table) <= room) { return; }
    var wrapped = table.offsetWidth <= room ? table.offsetHeight : Infinity;
    if (rows > 1 && rows <= MAX_TRANSPOSED_ROWS) {
      var other = alternative(block, "transposed", transposed), turned = other.querySelector("table");
      block.classList.add("measuring");
      var fits = natural(turned) <= room;
      var turnedWrapped = turned.offsetWidth <= room ? other.offsetHeight : Infinity;
      block.classList.remove("measuring");
      if (fits || turnedWrapped < wrapped) { block.classList.add("as-transposed"); return; }
    }
    if (wrapped < Infinity) { return; }
    if (rows <= MAX_CARD_ROWS) {
      alternative(block, "cards", cards);
      block.classList.add("as-cards");
      return;
    }
    hint.hidden = false;
  }

  var blocks = document.querySelectorAll(".fit");
  function fitAll() { for (var i = 0; i < blocks.length; i++) { fit(blocks[i]); } }
  fitAll();
  var pending = null, lastWidth = window.innerWidth;
  window.addEventListener("resize", function () {
    if (window.innerWidth === lastWidth) { return; }
    lastWidth = window.innerWidth;
    clearTimeout(pending);
    pending = setTimeout(fitAll, 150);
  });

  // ------------------------------------------------------------------ transcripts
  var PAGE = 50;
  var shown = document.getElementById("shown"), list = document.getElementById("story-list");
  var form = document.getElementById("filters"), pager = document.getElementById("pager");
  var field = {
    run: document.getElementById("f-run"), task: document.getElementById("f-task"),
    category: document.getElementById("f-category"), outcome: document.getElementById("f-outcome"),
    turn: document.getElementById("f-turn"), id: document.getElementById("f-id"),
    sort: document.getElementById("sort"), order: document.getElementById("order")
  };
  var data = null, start = [], order = [], page = 0, wanted = null, applied = null;

  function number(n) { return n.toLocaleString("en"); }

  function option(select, value, label) {
    var node = element("option", "", label);
    node.value = String(value);
    select.appendChild(node);
  }

  function distinct(column) {
    var seen = {}, values = [];
    column.forEach(function (t) { if (!seen[t]) { seen[t] = true; values.push(t); } });
    return values.sort(function (a, b) { return data.texts[a] < data.texts[b] ? -1 : data.texts[a] > data.texts[b] ? 1 : 0; });
  }

  function setUp() {
    var s = data.stories, total = 0, deepest = 0;
    for (var i = 0; i < s.run.length; i++) { start.push(total); total += s.turns[i]; deepest = Math.max(deepest, s.turns[i]); }
    data.runs.forEach(function (run, r) { option(field.run, r, run.name); });
    distinct(s.task).forEach(function (t) { option(field.task, t, data.texts[t]); });
    distinct(s.category).forEach(function (t) { option(field.category, t, data.texts[t]); });
    data.outcomes.forEach(function (name, o) { option(field.outcome, o, name); });
    for (var k = 1; k <= deepest; k++) { option(field.turn, k, "turn " + k); }
    form.hidden = false;
    form.addEventListener("change", apply);
    field.id.addEventListener("input", apply);
    form.addEventListener("reset", function () { setTimeout(apply, 0); });
    document.getElementById("prev").addEventListener("click", function () { page -= 1; draw(); });
    document.getElementById("next").addEventListener("click", function () { page += 1; draw(); });
    var runNotes = document.createDocumentFragment();
    data.runs.forEach(function (run) { if (run.note) { runNotes.appendChild(element("p", "note pictures-note", run.name + ": " + run.note)); } });
    form.parentNode.insertBefore(runNotes, form);
    if (wanted) { choose(wanted.run, wanted.outcome); } else { apply(); }
  }

  function sortKey(name) {
    var s = data.stories, texts = data.texts;
    if (name === "turn") { return function (i) { return s.turn[i] || 1e9; }; }
    if (name === "outcome") { return function (i) { return s.outcome[i]; }; }
    if (name === "run") { return function (i) { return s.run[i]; }; }
    var column = s[name];
    return function (i) { return texts[column[i]]; };
  }

  function apply() {
    var s = data.stories, run = field.run.value, task = field.task.value, category = field.category.value;
    var outcome = field.outcome.value, turn = field.turn.value, needle = field.id.value.trim().toLowerCase();
    var state = [run, task, category, outcome, turn, needle, field.sort.value, field.order.value].join("\n");
    if (state === applied) { return; }  // (a text field's change event repeats its input events)
    applied = state;
    var right = data.outcomes.indexOf("right");
    order = [];
    for (var i = 0; i < s.run.length; i++) {
      if (run !== "" && s.run[i] !== +run) { continue; }
      if (task !== "" && s.task[i] !== +task) { continue; }
      if (category !== "" && s.category[i] !== +category) { continue; }
      if (outcome === "not right" ? s.outcome[i] === right : outcome !== "" && s.outcome[i] !== +outcome) { continue; }
      if (turn !== "" && s.turn[i] !== +turn) { continue; }
      if (needle && data.texts[s.id[i]].toLowerCase().indexOf(needle) < 0) { continue; }
      order.push(i);
    }
    var key = sortKey(field.sort.value), sign = field.order.value === "desc" ? -1 : 1;
    order.sort(function (a, b) {
      var x = key(a), y = key(b);
      return x < y ? -sign : x > y ? sign : a - b;
    });
    page = 0;
    draw();
  }

  function draw() {
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    page = Math.min(Math.max(page, 0), pages - 1);
    var first = page * PAGE, last = Math.min(order.length, first + PAGE), total = data.stories.run.length;
    list.textContent = "";
    var fragment = document.createDocumentFragment();
    for (var n = first; n < last; n++) { fragment.appendChild(story(order[n])); }
    list.appendChild(fragment);
    shown.textContent = order.length ? "StoryTurns " + number(first + 1) + "–" + number(last) + " of " +
      number(order.length) + (order.length < total ? " shown (" + number(total) + " in all)" : "") :
      "No StoryTurn matches (" + number(total) + " in all).";
    pager.hidden = pages < 2;
    document.getElementById("page").textContent = "page " + (page + 1) + " of " + pages;
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
  }

  function badge(kind) { return element("span", "badge " + kind.replace(/ /g, "-"), kind); }

  function story(i) {
    var s = data.stories, texts = data.texts, outcome = data.outcomes[s.outcome[i]];
    var details = element("details", "story"), summary = element("summary");
    details.dataset.outcome = outcome;
    details.dataset.index = i;
    summary.appendChild(badge(outcome));
    summary.appendChild(document.createTextNode(" "));
    summary.appendChild(element("strong", "sid", texts[s.id[i]]));
    var facts = [texts[s.task[i]], texts[s.category[i]], texts[s.subset[i]], texts[s.source[i]],
                 s.turn[i] ? "turn " + s.turn[i] + " of " + s.turns[i] + " not right" : s.turns[i] + " turn(s)"];
    summary.appendChild(element("span", "facts", " · " + facts.join(" · ")));
    summary.appendChild(element("span", "run", data.runs[s.run[i]].name));
    details.appendChild(summary);
    details.addEventListener("toggle", function () {
      if (details.open && details.childNodes.length === 1) { turns(details, i); }
    });
    return details;
  }

  function text(i) { return i < 0 ? null : data.texts[i]; }

  function turns(details, i) {
    var t = data.turns, run = data.runs[data.stories.run[i]];
    for (var k = 0; k < data.stories.turns[i]; k++) {
      var j = start[i] + k, box = element("div", "turn"), picture = element("div", "picture"), body = element("div");
      t.images[j].forEach(function (image) {
        if (image[2] && data.pictures[image[2]]) {
          var img = element("img");
          img.alt = "picture " + data.texts[image[0]];
          img.src = data.pictures[image[2]];
          picture.appendChild(img);
        }
        var sha = data.texts[image[1]];
        picture.appendChild(element("div", "id", data.texts[image[0]] + (sha ? " · sha256 " + sha : "")));
      });
      if (!t.images[j].length) {
        picture.appendChild(element("div", "id", data.stories.shown[i] ? "no picture" : "images " + run.images));
      }
      var head = element("p");
      head.appendChild(element("strong", "", "Turn " + (k + 1)));
      head.appendChild(document.createTextNode(" "));
      head.appendChild(badge(data.verdicts[t.verdict[j]]));
      head.appendChild(element("span", "note", " feedback: " + text(t.feedback[j])));
      body.appendChild(head);
      body.appendChild(element("div", "prompt", text(t.prompt[j])));
      var reply = text(t.response[j]);
      body.appendChild(element("div", "reply", reply !== null ? reply : "(no reply: " + text(t.error[j]) + ")"));
      var judge = text(t.judge[j]), why = text(t.rationale[j]);
      body.appendChild(element("p", "reason", "Expected: " + text(t.expected[j]) + (judge ? " · judge " + judge : "") +
                                             (why ? ": " + why : "")));
      box.appendChild(picture);
      box.appendChild(body);
      details.appendChild(box);
    }
  }

  function choose(run, outcome) {
    form.reset();
    field.run.value = run;
    field.outcome.value = String(data.outcomes.indexOf(outcome));
    apply();
  }

  // a count in the runs table shows those StoryTurns (once the data is there)
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.count");
    if (!link) { return; }
    if (data) { choose(link.dataset.run, link.dataset.outcome); } else { wanted = { run: link.dataset.run, outcome: link.dataset.outcome }; }
  });

  function load() {
    if (typeof DecompressionStream === "undefined") {
      shown.textContent = "This browser cannot unpack the transcripts (it lacks DecompressionStream: Chrome 80, " +
                          "Firefox 113, Safari 16.4 or later can); `commet export` writes them as JSON lines.";
      return;
    }
    var raw = atob(document.getElementById("transcript-data").textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    new Response(stream).text().then(function (json) {
      data = JSON.parse(json);
      setUp();
      document.documentElement.dataset.transcripts = "ready";
    }).catch(function (error) { shown.textContent = "The transcripts could not be read: " + error; });
  }
  // after the first paint: the tables and plots are on screen while the transcripts are unpacked
  requestAnimationFrame(function () { setTimeout(load, 0); });
})();
