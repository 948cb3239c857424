// sgmon incident report: draws the charts of the embedded data with the inlined uPlot.
// Every chart shares one time axis (UTC): dragging selects a range and zooms all charts,
// double-click or "whole range" zooms out, and the cursor moves in every chart at once.  The
// address keeps the zoom (#from=...&to=..., UTC), so a link opens the same view.
// When every chart has drawn, <html data-drawn="ms since navigation"> says so, and each
// chart's element carries data-points (ticks holding a value), data-breaks (ticks where a
// line breaks at a gap) and data-y (its y axis' range), which tests and the bench read.
(function () {
  "use strict";
  const root = document.documentElement;
  const data = JSON.parse(document.getElementById("sgmon-data").textContent);
  const x = data.x.map((v) => data.t0 + v);
  const PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
                   "#000000", "#999933"];  // Okabe-Ito: readable for colour-blind readers
  const BAND = { crit: "rgba(213,94,0,0.16)", warn: "rgba(230,159,0,0.13)" };
  const HEIGHT = 190;
  const HEAT_HEIGHT = 260;  // ten bucket rows, each labelled
  const charts = [];
  let syncing = false;
  let drawn = 0;
  let total = 0;

  const X_SCALE = { time: true };
  const WHOLE = x.length > 1  // one tick alone (one AWR report): a step either side, not years
    ? { min: x[0], max: x[x.length - 1] }
    : { min: x[0] - data.step, max: x[0] + data.step };
  const utc = (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC");
  const iso = (ts) => new Date(ts * 1e3).toISOString();  // UTC, as sgmon prints times

  function tick(ts, step) {
    // 24-hour UTC axis labels: the date for day steps, seconds (tenths) when the step needs them
    const s = iso(ts);
    if (step >= 86400) return s.slice(0, 10);
    return step >= 60 ? s.slice(11, 16) : step >= 1 ? s.slice(11, 19) : s.slice(11, 21);
  }

  function marks(host, shade = true) {
    // findings of this host, warn and crit, as shaded spans behind the lines, and the log
    // switches as dashed verticals
    const spans = shade ? data.bands[host] || [] : [];
    return {
      hooks: {
        drawClear: [(u) => {
          const ctx = u.ctx;
          const { left, top, width, height } = u.bbox;
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, height);
          ctx.clip();  // zoomed in, a span or a switch may lie outside the plot
          for (const [a, b, sev] of spans) {
            const x0 = u.valToPos(data.t0 + a, "x", true);
            const x1 = u.valToPos(data.t0 + b, "x", true);
            ctx.fillStyle = BAND[sev];
            ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
          }
          ctx.strokeStyle = "#777";
          ctx.setLineDash([3, 3]);
          ctx.lineWidth = 1;
          ctx.beginPath();
          for (const t of data.switches) {  // log switches, on every chart of both hosts
            const x0 = Math.round(u.valToPos(data.t0 + t, "x", true)) + 0.5;
            ctx.moveTo(x0, top);
            ctx.lineTo(x0, top + height);
          }
          ctx.stroke();
          ctx.restore();
        }],
      },
    };
  }

  function count(u, test) {
    // ticks at which some series of this chart passes ``test``
    let n = 0;
    for (let i = 0; i < u.data[0].length; i++) {
      for (let s = 1; s < u.data.length; s++) {
        if (test(u.data[s][i])) { n++; break; }
      }
    }
    return n;
  }

  let zoomStart = null;  // performance.now() when a linked range was applied
  const zoomDrawn = new Set();
  const shared = linked();

  function onDrawn(u) {
    const y = u.scales.y;
    if (y && y.min != null) u.root.parentNode.dataset.y = `${y.min},${y.max}`;  // the axis drawn
    if (!u._sgmonDrawn) {
      u._sgmonDrawn = true;
      drawn++;
      if (drawn === total) {
        root.dataset.drawn = performance.now().toFixed(1);
        if (shared) queueMicrotask(zoomLinked);
      }
    } else if (zoomStart !== null && u.scales.x.min === shared.min && u.scales.x.max === shared.max) {
      // <html data-zoomed>: ms from applying the linked range to every chart redrawn in it
      zoomDrawn.add(u);
      if (zoomDrawn.size === charts.length) {
        root.dataset.zoomed = (performance.now() - zoomStart).toFixed(1);
        zoomStart = null;
      }
    }
  }

  function zoomLinked() {
    zoomStart = performance.now();
    charts[0].setScale("x", shared);
  }

  function zoomAll(u, key) {
    // one zoom for every chart, written into the address (#from=...&to=...) to share the view
    if (key !== "x") return;
    const { min, max } = u.scales.x;
    u.root.parentNode.dataset.range = `${(min - data.t0).toFixed(3)},${(max - data.t0).toFixed(3)}`;
    if (drawn < total || syncing) return;  // the first draws set every chart's range alike
    syncing = true;
    for (const o of charts) {
      if (o !== u && (o.scales.x.min !== min || o.scales.x.max !== max)) o.setScale("x", { min, max });
    }
    syncing = false;
    const stamp = (t) => iso(t).slice(0, 19) + "Z";
    history.replaceState(null, "", `#from=${stamp(min)}&to=${stamp(max)}`);
  }

  function linked() {
    // the range a shared address names (#from=2026-11-24T11:39:30Z&to=...), if any
    const m = /from=([^&]+)&to=([^&]+)/.exec(location.hash);
    const range = m && [Date.parse(decodeURIComponent(m[1])), Date.parse(decodeURIComponent(m[2]))];
    return range && range[0] < range[1] ? { min: range[0] / 1e3, max: range[1] / 1e3 } : null;
  }

  function chartWidth(el) {
    return Math.max(320, el.clientWidth);
  }

  function column(s, log) {
    // uPlot joins the line across undefined and breaks it at null: no sample at a tick (the
    // other host's, a collector of another step) is undefined, a gap in the series is null
    const out = s.values.map((v) => (v == null || (log && v <= 0) ? undefined : v));
    for (const i of s.gaps || []) out[i] = null;
    return out;
  }

  function heat(c) {
    // the "% of waits" cells: one column per tick, one row per bucket, brighter as more of
    // the interval's waits fell in it (any share at all is visible)
    return (u) => {
      const ctx = u.ctx;
      const { left, top, width, height } = u.bbox;
      ctx.save();
      ctx.beginPath();
      ctx.rect(left, top, width, height);
      ctx.clip();
      for (let i = 0; i < x.length; i++) {
        const cells = c.heat[i];
        if (!cells) continue;
        const x0 = u.valToPos(x[i], "x", true);
        const next = i + 1 < x.length ? x[i + 1] : x[i] + (i ? x[i] - x[i - 1] : 1);
        const x1 = u.valToPos(next, "x", true);
        if (x1 < left || x0 > left + width) continue;
        for (let r = 0; r < cells.length; r++) {
          if (!cells[r]) continue;
          const y0 = u.valToPos(r + 1, "y", true);
          const y1 = u.valToPos(r, "y", true);
          ctx.fillStyle = `rgba(0,114,178,${(0.15 + 0.85 * cells[r] / 100).toFixed(3)})`;
          ctx.fillRect(x0, y0, Math.max(1, x1 - x0), y1 - y0);
        }
      }
      ctx.restore();
    };
  }

  function makeHeat(el, host, c) {
    const rows = c.rows.length;
    const u = new uPlot({
      title: c.title,
      width: chartWidth(el),
      height: HEAT_HEIGHT,
      tzDate: utc,
      legend: { show: false },
      series: [{}, { label: "% of waits", scale: "y" }],
      axes: [
        { space: 80, values: (u, splits, ax, space, step) => splits.map((v) => (v == null ? "" : tick(v, step))) },
        {
          size: 56,
          splits: () => c.rows.map((_, r) => r + 0.5),
          values: (u, splits) => splits.map((v) => c.rows[Math.floor(v)]),
          grid: { show: false },
        },
      ],
      scales: { x: X_SCALE, y: { auto: false, range: [0, rows] } },
      cursor: { sync: { key: "sgmon" } },
      plugins: [marks(host, false)],  // no shading: the cells' own colour is the signal
      hooks: { setScale: [zoomAll], draw: [heat(c), onDrawn] },
    }, [x, x.map(() => null)], el);
    if (x.length === 1) u.setScale("x", WHOLE);
    el.dataset.points = String(c.heat.filter((cells) => cells != null).length);
    el.dataset.breaks = "0";
    charts.push(u);
  }

  function make(el, host, c) {
    if (c.heat) return makeHeat(el, host, c);
    const series = [{ value: (u, v) => (v == null ? "--" : iso(v).slice(0, 19).replace("T", " ")) }];
    const cols = [x];
    c.series.forEach((s, i) => {
      series.push({
        label: s.label,
        stroke: PALETTE[i % PALETTE.length],
        width: 1.5,
        dash: s.dash ? [6, 4] : undefined,
        scale: s.y2 ? "y2" : "y",
      });  // uPlot's default points: drawn only where the samples are sparse (an import)
      cols.push(column(s, c.log));
    });
    const axes = [
      { space: 80, values: (u, splits, ax, space, step) => splits.map((v) => (v == null ? "" : tick(v, step))) },
      { label: c.unit, size: 56 },
    ];
    // a linear axis starts at zero: a healthy standby's 0.46-0.48 ms is a flat line, not an event
    const fromZero = { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] };
    const scales = { x: X_SCALE, y: c.log ? { distr: 3, log: 2 } : fromZero };
    if (c.y2) {
      axes.push({ scale: "y2", side: 1, label: c.y2, size: 56, grid: { show: false } });
      scales.y2 = fromZero;
    }
    const u = new uPlot({
      title: c.title,
      width: chartWidth(el),
      height: HEIGHT,
      tzDate: utc,
      series,
      axes,
      scales,
      cursor: { sync: { key: "sgmon" } },
      plugins: [marks(host)],
      hooks: { setScale: [zoomAll], draw: [onDrawn] },
    }, cols, el);
    if (x.length === 1) u.setScale("x", WHOLE);
    el.dataset.points = String(count(u, (v) => v != null));  // values held
    el.dataset.breaks = String(count(u, (v) => v === null));  // gaps: the line breaks
    el.dataset.series = String(c.series.length);
    charts.push(u);
  }

  function element(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }

  const main = document.getElementById("charts");
  const work = [];
  for (const section of data.sections) {
    const box = element("section", "charts");
    box.appendChild(element("h2", "", section.title));
    const grid = element("div", "grid");
    for (const h of data.hosts) {
      const col = element("div", "col");
      col.appendChild(element("h3", "", `${h.name}${h.role ? " (" + h.role + ")" : ""}`));
      const list = section.charts[h.name] || [];
      if (!list.length) col.appendChild(element("p", "none", "nothing recorded"));
      for (const c of list) {
        const el = element("div", "chart");
        el.id = c.id;
        col.appendChild(el);
        work.push([el, h.name, c]);
      }
      grid.appendChild(col);
    }
    box.appendChild(grid);
    main.appendChild(box);
  }
  total = work.length;
  root.dataset.charts = String(total);
  for (const [el, host, c] of work) make(el, host, c);
  if (total === 0) root.dataset.drawn = performance.now().toFixed(1);

  document.getElementById("whole").addEventListener("click", () => {
    if (charts.length) charts[0].setScale("x", WHOLE);
  });
  window.addEventListener("resize", () => {
    for (const u of charts) u.setSize({ width: chartWidth(u.root.parentNode), height: u.height });
  });
})();
