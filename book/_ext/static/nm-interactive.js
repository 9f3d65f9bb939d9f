/* Interactive figures of the book without a kernel (see netmodels/interactive.py).
 *
 * Each <div class="nm-interactive"> holds a <script type="application/json"> with a
 * family of precomputed curves.  This script draws the figure with Plotly (served from
 * this site) and adds one range slider per parameter; moving a slider picks another
 * precomputed frame.  Loaded with `defer` after plotly.min.js, so the DOM is parsed.
 */
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function mount(root) {
    var specEl = root.querySelector("script.nm-interactive-spec");
    if (!specEl || root.getAttribute("data-nm-mounted")) { return; }
    var spec = JSON.parse(specEl.textContent);
    if (spec.version !== 1) { throw new Error("nm-interactive: unknown spec version " + spec.version); }
    var idx = spec.params.map(function (p) { return p.initial; });
    var frameOf = function () {
      var k = 0;
      spec.params.forEach(function (p, i) { k = k * p.labels.length + idx[i]; });
      return k;
    };
    // entries are stored only along the sliders they depend on (table.deps)
    var lookup = function (table) {
      var k = 0;
      table.deps.forEach(function (a) { k = k * spec.params[a].labels.length + idx[a]; });
      return table.idx[k];
    };
    var traces = function () {
      return spec.traces.map(function (t, i) {
        var entry = lookup(spec.tables[i]);
        var d = Object.assign({}, t.style, { name: t.name });
        if (spec.kind === "heatmap") {
          d.z = spec.pool[entry[1]];
        } else {
          d.x = entry[0] < 0 ? spec.x : spec.pool[entry[0]];
          d.y = spec.pool[entry[1]];
        }
        return d;
      });
    };

    var controls = el("div", "nm-controls");
    var plot = el("div", "nm-plot");
    var readout = el("p", "nm-readout");
    readout.setAttribute("aria-live", "polite");
    var layout = JSON.parse(JSON.stringify(spec.layout));

    function update() {
      var k = frameOf();
      root.setAttribute("data-nm-frame", String(k));
      if (spec.readout) { readout.textContent = spec.readout.texts[lookup(spec.readout)]; }
      return window.Plotly.react(plot, traces(), layout, CONFIG);
    }

    spec.params.forEach(function (p, i) {
      var id = root.id + "-" + p.name;
      var row = el("div", "nm-control");
      var label = el("label", "nm-label", p.label);
      label.setAttribute("for", id);
      var input = el("input", "nm-slider");
      input.type = "range";
      input.id = id;
      input.min = "0";
      input.max = String(p.labels.length - 1);
      input.step = "1";
      input.value = String(idx[i]);
      input.setAttribute("data-param", p.name);
      var out = el("output", "nm-value", p.labels[idx[i]]);
      out.setAttribute("for", id);
      input.setAttribute("aria-valuetext", p.labels[idx[i]]);
      input.addEventListener("input", function () {
        idx[i] = Number(input.value);
        out.textContent = p.labels[idx[i]];
        input.setAttribute("aria-valuetext", p.labels[idx[i]]);
        update();
      });
      row.appendChild(label);
      row.appendChild(input);
      row.appendChild(out);
      controls.appendChild(row);
    });

    var fallback = root.querySelector(".nm-interactive-fallback");
    if (fallback) { fallback.hidden = true; }
    root.appendChild(plot);
    root.appendChild(controls);
    if (spec.readout) { root.appendChild(readout); }
    root.setAttribute("data-nm-mounted", "1");
    update();
  }

  function mountAll() {
    if (!window.Plotly) {
      console.error("nm-interactive: plotly.min.js is not loaded");
      return;
    }
    document.querySelectorAll("div.nm-interactive").forEach(mount);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mountAll);
  } else {
    mountAll();
  }
})();
