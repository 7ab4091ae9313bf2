/* mcp-bdd living documentation: search, tag-expression and status filters, deep links, print.
   Its data (search index and MCP messages, each distinct payload once) is packed: gzip, then
   base64, in <script id="mcp-bdd-data">, inflated with the browser's DecompressionStream. Never
   evaluates or inserts data as HTML (only text nodes / attributes are set), so nothing a server
   sent can run here; and its bidirectional controls are shown as escapes, never applied. */
(function () {
  "use strict";
  var index = [];
  var q = document.getElementById("q");
  var tagInput = document.getElementById("tagexpr");
  var tagError = document.getElementById("tag-error");
  var shown = document.getElementById("shown");
  var clear = document.getElementById("clear");
  var chips = Array.prototype.slice.call(document.querySelectorAll("[data-outcome]"));
  var kindChips = Array.prototype.slice.call(document.querySelectorAll("[data-kind]"));
  var flakyChip = document.querySelector("[data-flaky]");
  var containers = Array.prototype.slice.call(document.querySelectorAll("[data-container]"));
  var elements = {};
  var values = [], evidence = [], loaded = false;

  function inflate(base64) {
    var bytes = Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  /* -- MCP messages: drawn from the packed data when their <details> opens --------------------- */
  var ARROWS = { request: "→", response: "←", error: "✗", notification: "⇠", server_request: "⇠?",
    client_response: "→!", fake: "⟂", info: "·" };
  var SAFE_IMAGES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

  /* Bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE, the embeddings, isolates and marks)
     are shown as their escape ("\u202e"), marked, never applied: applied, a server's would reverse
     the text around it, ours included. So are the other controls the terminal shows as escapes
     (NUL, ESC: "\x1b"). render.py does the same for the page it writes. */
  var CONTROL = /([\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029])/;
  var BIDI_ONLY = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
  var BIDI_TITLE = "A bidirectional control character, shown rather than applied";
  var CONTROL_TITLE = "A control character, shown rather than applied";

  function controlEscape(c) {
    var code = c.charCodeAt(0);
    return code <= 0xff ? "\\x" + ("0" + code.toString(16)).slice(-2) : "\\u" + ("000" + code.toString(16)).slice(-4);
  }

  /* For attributes (alt text), which hold no markup: the bare escape. */
  function plain(text) { return String(text).replace(new RegExp(CONTROL.source, "g"), controlEscape); }

  /* Text appended to a parent element as text nodes, each control as a marked escape. */
  function addText(parent, text) {
    String(text).split(CONTROL).forEach(function (part, n) {
      if (n % 2) {
        var mark = document.createElement("span");
        mark.className = "bidi";
        mark.title = BIDI_ONLY.test(part) ? BIDI_TITLE : CONTROL_TITLE;
        mark.textContent = controlEscape(part);
        parent.appendChild(mark);
      } else if (part) {
        parent.appendChild(document.createTextNode(part));
      }
    });
    return parent;
  }

  /* Small values on one line ("a": 1, "b": 2), as the server side lays them out. */
  function flat(value) {
    if (value === null || typeof value !== "object") {
      var json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    }
    if (Array.isArray(value)) { return "[" + value.map(flat).join(", ") + "]"; }
    return "{" + Object.keys(value).map(function (k) { return JSON.stringify(k) + ": " + flat(value[k]); })
      .join(", ") + "}";
  }

  /* JSON as DOM text, folded where long: strings over FOLD_CHARS and arrays over FOLD_ITEMS get a
     "show all" button that puts the rest back in place. Only text nodes: nothing is parsed as HTML. */
  var FOLD_CHARS = 400, FOLD_ITEMS = 20, FOLD_SHOWN = 8;

  function foldButton(label, onOpen) {
    var b = node("button", "fold", label);
    b.type = "button";
    b.addEventListener("click", function () { onOpen(b); });
    return b;
  }

  function jsonInto(out, value, indent) {
    if (typeof value === "string" && value.length > FOLD_CHARS) {
      var head = out.appendChild(node("span", "", JSON.stringify(value.slice(0, FOLD_CHARS / 2)).slice(0, -1) + "…"));
      out.appendChild(foldButton("show all " + value.length + " characters", function (b) {
        head.textContent = "";
        addText(head, JSON.stringify(value).slice(0, -1));
        b.remove();
      }));
      out.appendChild(document.createTextNode("\""));
      return;
    }
    var one = flat(value);
    var isObject = value !== null && typeof value === "object";
    var keys = isObject ? Object.keys(value) : [];
    if ((indent + one.length <= 88 && one.length <= 2 * FOLD_CHARS) || !isObject || keys.length === 0) {
      addText(out, one);
      return;
    }
    var pad = " ".repeat(indent + 2), end = "\n" + " ".repeat(indent);
    var isArray = Array.isArray(value);
    out.appendChild(document.createTextNode(isArray ? "[\n" : "{\n"));
    function item(k, n, last) {
      addText(out, pad + (isArray ? "" : JSON.stringify(k) + ": "));
      jsonInto(out, value[k], indent + 2);
      out.appendChild(document.createTextNode(last ? "" : ",\n"));
    }
    var shown = isArray && keys.length > FOLD_ITEMS ? FOLD_SHOWN : keys.length;
    keys.slice(0, shown).forEach(function (k, n) { item(k, n, n === keys.length - 1); });
    if (shown < keys.length) {
      var rest = document.createElement("span");
      rest.appendChild(document.createTextNode(pad));
      rest.appendChild(foldButton("show all " + keys.length + " items", function () {
        var holder = document.createElement("span");
        var saved = out;
        out = holder;
        keys.slice(shown).forEach(function (k, n) { item(k, shown + n, shown + n === keys.length - 1); });
        out = saved;
        rest.replaceWith(holder);
      }));
      out.appendChild(rest);
    }
    out.appendChild(document.createTextNode(end + (isArray ? "]" : "}")));
  }

  function jsonPre(value) {
    var pre = node("pre", "json");
    jsonInto(pre, value, 0);
    return pre;
  }

  /* Text a server returned that holds JSON or Markdown is shown formatted under the raw message. */
  function texts(payload) {
    var out = [];
    function take(c) {
      if (c && typeof c === "object" && typeof c.text === "string") { out.push([c.text, c.mimeType || ""]); }
    }
    if (payload && typeof payload === "object") {
      (Array.isArray(payload.content) ? payload.content : []).forEach(take);
      (Array.isArray(payload.contents) ? payload.contents : []).forEach(take);
      (Array.isArray(payload.messages) ? payload.messages : []).forEach(function (m) { take(m && m.content); });
    }
    return out;
  }

  function parsedJson(text) {
    var s = text.trim();
    if (!/^[\[{]/.test(s)) { return undefined; }
    try { return JSON.parse(s); } catch (err) { return undefined; }
  }

  var MARKDOWN = /(^|\n)(#{1,6} |[-*] |\d+\. |\x60{3}|> )|\*\*[^*]+\*\*|\[[^\]]+\]\([^)]+\)/;

  function inline(parent, line) {
    var parts = line.split(/(\*\*[^*]+\*\*|\x60[^\x60]+\x60)/);
    parts.forEach(function (part) {
      if (/^\*\*[^*]+\*\*$/.test(part)) { parent.appendChild(node("strong", "", part.slice(2, -2))); }
      else if (/^\x60[^\x60]+\x60$/.test(part)) { parent.appendChild(node("code", "", part.slice(1, -1))); }
      else if (part) { addText(parent, part); }
    });
  }

  function markdown(text) {
    var box = node("div", "md"), list = null, code = null;
    text.split("\n").forEach(function (line) {
      if (code) {
        if (/^\x60{3}/.test(line)) { code = null; } else { addText(code, line + "\n"); }
        return;
      }
      if (/^\x60{3}/.test(line)) { code = box.appendChild(node("pre", "", "")); list = null; return; }
      var m = /^(#{1,6}) (.*)$/.exec(line);
      if (m) { list = null; inline(box.appendChild(node("div", "md-h")), m[2]); return; }
      m = /^\s*(?:[-*]|\d+\.) (.*)$/.exec(line);
      if (m) {
        if (!list) { list = box.appendChild(node("ul", "")); }
        inline(list.appendChild(node("li", "")), m[1]);
        return;
      }
      list = null;
      if (line.trim()) { inline(box.appendChild(node("p", "")), line.replace(/^> /, "")); }
    });
    return box;
  }

  function formattedTexts(box, payload) {
    texts(payload).forEach(function (pair, n) {
      var text = pair[0], parsed = parsedJson(text);
      var isMd = parsed === undefined && (/markdown/.test(pair[1]) || MARKDOWN.test(text));
      if (parsed === undefined && !isMd) { return; }
      var holder = node("div", "xtext");
      holder.appendChild(node("div", "xtext-h", "text " + (n + 1) + (parsed !== undefined ? " as JSON" : " as Markdown")));
      holder.appendChild(parsed !== undefined ? jsonPre(parsed) : markdown(text));
      box.appendChild(holder);
    });
  }

  function node(tag, cls, text) {
    var el = document.createElement(tag);
    if (cls) { el.className = cls; }
    if (text !== undefined && text !== null) { addText(el, text); } // text only: never HTML
    return el;
  }

  function size(n) {
    return n < 1000 ? n + " B" : n < 1e6 ? (n / 1000).toFixed(1) + " kB" : (n / 1e6).toFixed(1) + " MB";
  }

  function drawExchange(x) {
    var kind = /^[a-z_]+$/.test(x.k) ? x.k : "other";
    var box = node("div", "x k-" + kind + (x.e ? " x-err" : ""));
    var head = node("div", "xh");
    head.appendChild(node("b", "", ARROWS[kind] || "·"));
    head.appendChild(node("i", "", String(x.k).replace(/_/g, " ")));
    head.appendChild(node("code", "", x.m));
    if (x.t !== undefined) { head.appendChild(node("code", "xt", x.t)); }
    if (x.e) { head.appendChild(node("span", "x-flag", "error")); }
    head.appendChild(node("span", "xs", x.s));
    if (x.d !== undefined) { head.appendChild(node("span", "xs", Number(x.d).toFixed(1) + " ms")); }
    head.appendChild(node("span", "xq", "#" + x.q + (x.r !== undefined ? " ↩ #" + x.r : "")));
    box.appendChild(head);
    if (x.p !== undefined) {
      var preview = String(values[x.p]);
      box.appendChild(node("pre", "", preview));
      box.appendChild(node("div", "trunc", "Cut for the report: showing the first " + preview.length +
        " characters of " + size(x.n) + "."));
    } else if ("b" in x) {
      var body = values[x.b];
      box.appendChild(jsonPre(body));
      if (kind === "response" || kind === "client_response") { formattedTexts(box, body); }
    }
    (x.i || []).forEach(function (img, n) {
      var mime = String(img[0]), data = String(values[img[1]]);
      if (SAFE_IMAGES.indexOf(mime) < 0 || !/^[A-Za-z0-9+\/]*={0,2}$/.test(data)) { return; }
      var fig = node("figure", "shot");
      var el = document.createElement("img");
      el.alt = plain(mime + " sent by " + x.s + " in " + x.m);
      el.src = "data:" + mime + ";base64," + data;
      fig.appendChild(el);
      fig.appendChild(node("figcaption", "", "image " + (n + 1) + " · " + mime + " · " + size(img[2])));
      box.appendChild(fig);
    });
    return box;
  }

  function drawEvidence(details) {
    if (!loaded || details.getAttribute("data-drawn")) { return; }
    details.setAttribute("data-drawn", "1");
    var list = evidence[Number(details.getAttribute("data-ev"))] || [];
    var holder = details.appendChild(node("div", "exchanges"));
    list.forEach(function (x) { holder.appendChild(drawExchange(x)); });
  }

  /* The call behind each failure is drawn at once: it is part of reading the failure. */
  function drawCalls() {
    document.querySelectorAll("[data-call]").forEach(function (el) {
      var holder = el.querySelector(".exchanges") || el;
      (evidence[Number(el.getAttribute("data-call"))] || []).forEach(function (x) { holder.appendChild(drawExchange(x)); });
    });
  }

  document.addEventListener("toggle", function (e) {
    var t = e.target;
    if (t && t.tagName === "DETAILS" && t.open && t.hasAttribute("data-ev")) { drawEvidence(t); }
  }, true);

  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  /* Tag expressions as behave writes them: @a and not @b, @a or (@b and @c); "*" is a wildcard. */
  function parseTagExpression(source) {
    var tokens = source.match(/\(|\)|[^\s()]+/g) || [];
    if (!tokens.length) { return null; }
    var i = 0;
    function peek() { return tokens[i] === undefined ? undefined : tokens[i].toLowerCase(); }
    function orExpr() {
      var left = andExpr();
      while (peek() === "or") { i++; left = (function (l, r) { return function (t) { return l(t) || r(t); }; })(left, andExpr()); }
      return left;
    }
    function andExpr() {
      var left = notExpr();
      while (peek() === "and") { i++; left = (function (l, r) { return function (t) { return l(t) && r(t); }; })(left, notExpr()); }
      return left;
    }
    function notExpr() {
      var token = tokens[i++];
      if (token === undefined) { throw new Error("the expression ends too early"); }
      var low = token.toLowerCase();
      if (low === "not") { var inner = notExpr(); return function (t) { return !inner(t); }; }
      if (token === "(") {
        var e = orExpr();
        if (tokens[i++] !== ")") { throw new Error("a “)” is missing"); }
        return e;
      }
      if (token === ")" || low === "and" || low === "or") { throw new Error("unexpected “" + token + "”"); }
      var name = token.replace(/^@/, "");
      if (name.indexOf("*") >= 0) {
        var re = new RegExp("^" + name.split("*").map(escapeRe).join(".*") + "$");
        return function (t) { return t.some(function (x) { return re.test(x); }); };
      }
      return function (t) { return t.indexOf(name) >= 0; };
    }
    var result = orExpr();
    if (i < tokens.length) { throw new Error("unexpected “" + tokens[i] + "”"); }
    return result;
  }
  window.mcpBddParseTagExpression = parseTagExpression; // for tests and the curious

  function pressed(list, attribute) {
    return list.filter(function (c) { return c.getAttribute("aria-pressed") === "true"; })
      .map(function (c) { return c.getAttribute(attribute); });
  }

  function activeOutcomes() { return pressed(chips, "data-outcome"); }

  function apply() {
    var terms = q.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var predicate = null;
    tagError.textContent = "";
    tagInput.classList.remove("bad");
    try { predicate = parseTagExpression(tagInput.value); } catch (err) {
      tagInput.classList.add("bad");
      tagError.textContent = "Tag expression: " + err.message + ".";
    }
    var outcomes = activeOutcomes();
    var kinds = pressed(kindChips, "data-kind");
    var flakyOnly = !!flakyChip && flakyChip.getAttribute("aria-pressed") === "true";
    var filtering = terms.length > 0 || predicate !== null || outcomes.length > 0 || kinds.length > 0 || flakyOnly;
    var count = 0;
    index.forEach(function (entry) {
      var ok = terms.every(function (t) { return entry.text.indexOf(t) >= 0; }) &&
        (predicate === null || predicate(entry.tags)) &&
        (outcomes.length === 0 || outcomes.indexOf(entry.outcome) >= 0) &&
        (kinds.length === 0 || kinds.indexOf(entry.kind) >= 0) && (!flakyOnly || entry.flaky);
      var el = elements[entry.id];
      if (el) { el.hidden = !ok; }
      if (ok) { count++; }
    });
    containers.forEach(function (c) {
      c.hidden = filtering && !c.querySelector("[data-scenario]:not([hidden])");
    });
    document.querySelectorAll("[data-toc-feature]").forEach(function (a) {
      var target = document.getElementById(a.getAttribute("data-toc-feature"));
      a.hidden = !!(target && target.hidden);
    });
    document.querySelectorAll("[data-toc-cap]").forEach(function (d) {
      var target = document.getElementById(d.getAttribute("data-toc-cap"));
      d.hidden = !!(target && target.hidden);
    });
    shown.textContent = filtering ? "Showing " + count + " of " + index.length + " scenarios." : "";
    clear.hidden = !(filtering || q.value.trim() || tagInput.value.trim());
    if (filtering && terms.length && count <= 30) {
      index.forEach(function (entry) { var el = elements[entry.id]; if (el && !el.hidden) { el.open = true; } });
    }
  }

  function clearFilters() {
    q.value = "";
    tagInput.value = "";
    chips.concat(kindChips, flakyChip ? [flakyChip] : []).forEach(function (c) { c.setAttribute("aria-pressed", "false"); });
    apply();
  }

  function reveal(id) {
    var el = id && document.getElementById(id);
    if (!el) { return; }
    if (el.closest("[hidden]")) { clearFilters(); }
    for (var p = el; p; p = p.parentElement) { if (p.tagName === "DETAILS") { p.open = true; } }
    el.scrollIntoView({ block: "start" });
    el.classList.remove("flash");
    void el.offsetWidth; // restart the highlight animation
    el.classList.add("flash");
  }

  var timer = null;
  q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 120); });
  tagInput.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 200); });
  document.querySelectorAll("[data-kind-link]").forEach(function (link) {
    link.addEventListener("click", function () {
      var kind = link.getAttribute("data-kind-link");
      kindChips.forEach(function (c) { c.setAttribute("aria-pressed", String(c.getAttribute("data-kind") === kind)); });
      apply();
      var first = document.querySelector("[data-scenario]:not([hidden])");
      if (first) { first.scrollIntoView({ block: "start" }); }
    });
  });
  chips.concat(kindChips, flakyChip ? [flakyChip] : []).forEach(function (c) {
    c.addEventListener("click", function () {
      c.setAttribute("aria-pressed", c.getAttribute("aria-pressed") === "true" ? "false" : "true");
      apply();
    });
  });
  clear.addEventListener("click", clearFilters);
  document.getElementById("expand-all").addEventListener("click", function () {
    document.querySelectorAll("details.scenario").forEach(function (d) { d.open = true; });
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    document.querySelectorAll("details.scenario").forEach(function (d) { d.open = false; });
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "/" && document.activeElement !== q && document.activeElement !== tagInput) { e.preventDefault(); q.focus(); }
  });
  window.addEventListener("hashchange", function () { reveal(decodeURIComponent(location.hash.slice(1))); });

  /* Print: every <details> open, then back to how the reader left them. */
  var closedBeforePrint = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details[data-ev]").forEach(drawEvidence);
    closedBeforePrint = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
    closedBeforePrint.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    closedBeforePrint.forEach(function (d) { d.open = false; });
    closedBeforePrint = [];
  });

  function start(data) {
    index = data.index || [];
    values = data.values || [];
    evidence = data.rows || [];
    loaded = true;
    index.forEach(function (entry) { elements[entry.id] = document.getElementById(entry.id); });
    drawCalls();
    // set once here rather than carried by every step and scenario of a large page: the glossary
    // link's tooltip and each scenario's "link to this scenario" anchor
    document.querySelectorAll(".step > p > a").forEach(function (a) { a.title = "What this step means (glossary)"; });
    document.querySelectorAll("details.scenario[id] > summary").forEach(function (summary) {
      var a = document.createElement("a");
      a.className = "anchor";
      a.href = "#" + summary.parentNode.id;
      a.title = "Link to this scenario";
      a.textContent = "#";
      summary.appendChild(a);
    });
    document.querySelectorAll("details[data-ev][open]").forEach(drawEvidence);
    if (q.value || tagInput.value || activeOutcomes().length || pressed(kindChips, "data-kind").length) { apply(); }
    var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target) { target.scrollIntoView({ block: "start" }); } // the drawn calls moved it
    document.documentElement.setAttribute("data-ready", "1"); // for tests and the curious
  }

  var packed = document.getElementById("mcp-bdd-data");
  if (location.hash) { reveal(decodeURIComponent(location.hash.slice(1))); }
  if (!packed || typeof DecompressionStream === "undefined") {
    document.getElementById("no-inflate").hidden = !packed;
    start({});
  } else {
    inflate(packed.textContent.trim()).then(function (text) { start(JSON.parse(text)); }, function (err) {
      var note = document.getElementById("no-inflate");
      note.textContent = "The report’s packed data could not be read: " + err + ".";
      note.hidden = false;
      start({});
    });
  }
})();
