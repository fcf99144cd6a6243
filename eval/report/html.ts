import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EvalSummary, ModelSummary, ResultLine } from '../summary.js';

/**
 * The report page: one self-contained HTML file (Chart.js inlined from node_modules, no CDN,
 * works offline) with the headline table per model, completion by database, difficulty and
 * SQL construct, the error categories (Live API-Bench's Figure 2), ReAct loop statistics and
 * a per-item drill-down. Model output is data: it reaches the page as JSON in a script tag
 * (every `<` escaped) and is shown with `textContent`, never as markup.
 */

export interface ReportRun {
  /** The run's folder name: tells runs apart when one model appears in several. */
  name: string;
  summary: EvalSummary;
  lines: readonly ResultLine[];
}

let chartSource: Promise<string> | undefined;
function chartJs(): Promise<string> {
  // The package exports no path to its UMD build; it sits beside the CommonJS entry.
  const entry = createRequire(import.meta.url).resolve('chart.js');
  chartSource ??= readFile(path.join(path.dirname(entry), 'chart.umd.min.js'), 'utf8');
  return chartSource;
}

export async function renderReportPage(runs: readonly ReportRun[]): Promise<string> {
  const models = runs.flatMap((run) =>
    run.summary.models.map((m) => ({
      ...m,
      label: labelOf(m, run, runs),
      run: run.name,
      formulation: run.summary.formulation,
    })),
  );
  const items = runs.flatMap((run) =>
    run.lines.map((line) => ({
      label: labelOf({ model: line.model }, run, runs),
      item: line.item,
      db: line.db,
      difficulty: line.difficulty,
      repeat: line.repeat,
      kind: line.kind,
      question: line.question,
      evidence: line.evidence,
      gold: line.goldCalls,
      calls: line.attempt?.sql !== undefined ? [{ sql: line.attempt.sql }] : (line.attempt?.parsed ?? null),
      steps: line.attempt?.steps ?? [],
      reply: line.attempt?.replies.map((r) => r.content).join('\n---\n') ?? '',
      completed: line.attempt?.scores.completed ?? false,
      verdict: line.attempt
        ? `${line.attempt.scores.answer.category}: ${line.attempt.scores.answer.message}`
        : `${line.failure?.category}: ${line.failure?.message}`,
      error: line.attempt ? (line.attempt.scores.error ?? 'none') : 'failed',
      divergence: line.attempt ? divergence(line.attempt.parsed, line.goldCalls) : null,
    })),
  );
  const title = `nl2api evaluation: ${[...new Set(runs.map((r) => `${r.summary.dataset} ${r.summary.formulation.toUpperCase()}`))].join(', ')}`;
  const data = {
    title,
    runs: runs.map((r) => ({
      name: r.name,
      dataset: r.summary.dataset,
      formulation: r.summary.formulation,
      settings: r.summary.settings,
    })),
    models,
    items,
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${escapeHtml(title)}</h1><p id="runs"></p></header>
<main>
<section><h2>Headline</h2><div class="scroll"><table id="headline"></table></div>
<p class="note">Completion: the final output equals the gold answer (95% bootstrap interval). Intent and slot F1 after Live API-Bench; sequence match after NESTFUL; stability after CallNavi (with --repeats).</p></section>
<section class="charts">
<figure><figcaption>Completion rate by database</figcaption><canvas id="by-db"></canvas></figure>
<figure><figcaption>Completion rate by difficulty</figcaption><canvas id="by-difficulty"></canvas></figure>
<figure><figcaption>Error categories (BFCL), share of items</figcaption><canvas id="errors"></canvas></figure>
<figure class="tall"><figcaption>Completion rate by SQL construct</figcaption><div id="by-construct-box"><canvas id="by-construct"></canvas></div></figure>
</section>
<section id="react-section" hidden><h2>ReAct loops</h2><table id="react"></table></section>
<section><h2>Items</h2>
<div class="filters"><label>Model <select id="f-model"></select></label> <label>Database <select id="f-db"></select></label> <label>Outcome <select id="f-outcome"><option value="">all</option><option value="completed">completed</option><option value="failed">not completed</option></select></label> <span id="count"></span></div>
<div id="items"></div></section>
</main>
<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script>${await chartJs()}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function labelOf(model: Pick<ModelSummary, 'model'>, run: ReportRun, runs: readonly ReportRun[]): string {
  const ambiguous = runs.filter((r) => r.summary.models.some((m) => m.model === model.model)).length > 1;
  return ambiguous ? `${model.model} (${run.name})` : model.model;
}

/** Index of the first predicted call that differs from the gold call at its position (name or arguments), or null when none does. */
function divergence(parsed: readonly unknown[] | null, gold: readonly unknown[]): number | null {
  if (parsed === null) return 0;
  const strip = (c: unknown) => {
    const call = c as { name?: unknown; arguments?: unknown } | null;
    return JSON.stringify([call?.name, call?.arguments]);
  };
  const n = Math.max(parsed.length, gold.length);
  for (let i = 0; i < n; i++) if (strip(parsed[i]) !== strip(gold[i])) return i;
  return null;
}

function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c9cfdb}
main{padding:8px 24px 40px;max-width:1400px}section{background:#fff;border-radius:8px;padding:12px 16px;margin:14px 0;box-shadow:0 1px 2px #0001}
h2{font-size:16px;margin:4px 0 10px}table{border-collapse:collapse;width:100%}th,td{padding:5px 8px;border-bottom:1px solid #e4e7ec;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f0f2f5;font-weight:600}.scroll{overflow-x:auto}.note{color:#5b6475;font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px;background:none;box-shadow:none;padding:0}
figure{background:#fff;border-radius:8px;margin:0;padding:12px;box-shadow:0 1px 2px #0001;min-height:280px}figure.tall{grid-column:1/-1}#by-construct-box{position:relative}figcaption{font-weight:600;margin-bottom:6px}
.filters{margin-bottom:8px}.filters select{margin-right:10px}details{border-bottom:1px solid #e4e7ec;padding:6px 0}summary{cursor:pointer}
.ok{color:#0a7a33;font-weight:600}.ko{color:#b3261e;font-weight:600}pre{background:#f6f7f9;padding:8px;border-radius:6px;white-space:pre-wrap;word-break:break-word;max-height:320px;overflow:auto;margin:4px 0}
.diverge{background:#fdecea}.grid2{display:grid;grid-template-columns:1fr 1fr;gap:10px}.muted{color:#5b6475}
`;

/** The page's own script: fills the tables, draws the charts, filters the drill-down. Plain DOM, text only. */
const PAGE_SCRIPT = `
(function(){
const data = JSON.parse(document.getElementById('report-data').textContent);
const pct = (x) => (100 * x).toFixed(1) + '%';
const f3 = (x) => x.toFixed(3);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
function table(node, head, rows) {
  const tr = el('tr'); head.forEach((h) => tr.appendChild(el('th', h))); node.appendChild(tr);
  rows.forEach((r) => { const row = el('tr'); r.forEach((c) => row.appendChild(el('td', c))); node.appendChild(row); });
}
document.getElementById('runs').textContent = data.runs.map((r) => r.name + ': ' + r.dataset + ' ' + r.formulation.toUpperCase() + ', ' + Object.entries(r.settings).map(([k, v]) => k + '=' + v).join(' ')).join(' · ');
table(document.getElementById('headline'),
  ['model', 'items', 'failed', 'completion', '95% CI', 'intent P', 'intent R', 'intent F1', 'slot P', 'slot R', 'slot F1', 'full seq.', 'partial seq.', 'stability', 'SQL baseline'],
  data.models.map((m) => [m.label, String(m.attempts), String(m.failed), pct(m.completion.mean), pct(m.completion.low) + '–' + pct(m.completion.high),
    f3(m.intentPrecision), f3(m.intentRecall), f3(m.intentF1.mean), f3(m.slotPrecision), f3(m.slotRecall), f3(m.slotF1.mean),
    pct(m.fullSequenceMatch), pct(m.partialSequenceMatch), m.stability === undefined ? '–' : f3(m.stability),
    m.sqlBaseline ? pct(m.sqlBaseline.completion.mean) : '–']));
const reacts = data.models.filter((m) => m.react);
if (reacts.length) {
  document.getElementById('react-section').hidden = false;
  table(document.getElementById('react'), ['model', 'average loops', 'out of budget', 'stuck'],
    reacts.map((m) => [m.label, m.react.averageLoops.toFixed(2), pct(m.react.outOfBudgetRate), pct(m.react.stuckRate)]));
}
const palette = ['#3366cc', '#dc3912', '#ff9900', '#109618', '#990099', '#0099c6', '#dd4477', '#66aa00', '#b82e2e', '#316395'];
function bars(id, groupOf, opts) {
  const keys = [...new Set(data.models.flatMap((m) => Object.keys(groupOf(m))))];
  new Chart(document.getElementById(id), {
    type: 'bar',
    data: { labels: keys, datasets: data.models.map((m, i) => ({ label: m.label, backgroundColor: palette[i % palette.length],
      data: keys.map((k) => { const g = groupOf(m)[k]; return g === undefined ? null : g.completion.mean * 100; }) })) },
    options: Object.assign({ animation: false, responsive: true, scales: { y: { min: 0, max: 100, title: { display: true, text: '%' } } } }, opts || {}),
  });
}
bars('by-db', (m) => m.byDatabase);
bars('by-difficulty', (m) => m.byDifficulty);
// One band per construct, tall enough for a bar per model.
const constructs = new Set(data.models.flatMap((m) => Object.keys(m.byConstruct))).size;
document.getElementById('by-construct-box').style.height = (60 + constructs * (8 + 10 * data.models.length)) + 'px';
bars('by-construct', (m) => m.byConstruct, { indexAxis: 'y', maintainAspectRatio: false, scales: { x: { min: 0, max: 100, title: { display: true, text: '%' } } } });
const categories = Object.keys(data.models[0] ? data.models[0].errors : {});
new Chart(document.getElementById('errors'), {
  type: 'bar',
  data: { labels: data.models.map((m) => m.label), datasets: categories.map((c, i) => ({ label: c, backgroundColor: c === 'none' ? '#c7cdd6' : palette[i % palette.length],
    data: data.models.map((m) => m.scored ? 100 * m.errors[c] / m.scored : 0) })) },
  options: { animation: false, indexAxis: 'y', scales: { x: { stacked: true, min: 0, max: 100, title: { display: true, text: '% of scored items' } }, y: { stacked: true } } },
});
const fModel = document.getElementById('f-model'), fDb = document.getElementById('f-db'), fOutcome = document.getElementById('f-outcome');
function options(select, values) { select.appendChild(el('option', 'all')).value = ''; values.forEach((v) => { select.appendChild(el('option', v)).value = v; }); }
options(fModel, [...new Set(data.items.map((i) => i.label))]);
options(fDb, [...new Set(data.items.map((i) => i.db))].sort());
const list = document.getElementById('items');
function show() {
  list.textContent = '';
  const chosen = data.items.filter((i) => (!fModel.value || i.label === fModel.value) && (!fDb.value || i.db === fDb.value)
    && (!fOutcome.value || (fOutcome.value === 'completed') === i.completed));
  document.getElementById('count').textContent = chosen.length + ' of ' + data.items.length + (chosen.length > 300 ? ' (first 300 shown)' : '');
  chosen.slice(0, 300).forEach((i) => {
    const d = el('details'); const s = el('summary');
    s.appendChild(el('span', i.completed ? '✓ ' : '✗ ', i.completed ? 'ok' : 'ko'));
    s.appendChild(el('span', i.item + (i.repeat ? ' #' + i.repeat : '') + ' · ' + i.label + ' · ' + i.error + ' · '));
    s.appendChild(el('span', i.question, 'muted'));
    d.appendChild(s);
    d.addEventListener('toggle', () => { if (d.open && d.childNodes.length === 1) detail(d, i); });
    list.appendChild(d);
  });
}
function detail(d, i) {
  d.appendChild(el('p', 'Evidence: ' + (i.evidence || '(none)')));
  d.appendChild(el('p', 'Answer: ' + i.verdict));
  if (i.divergence !== null) d.appendChild(el('p', 'Diverges from the gold at call ' + (i.divergence + 1) + '.', 'ko'));
  const grid = el('div', undefined, 'grid2');
  const calls = (title, list) => { const box = el('div'); box.appendChild(el('strong', title));
    (list || []).forEach((c, k) => box.appendChild(el('pre', JSON.stringify(c), k === i.divergence ? 'diverge' : undefined)));
    if (!list) box.appendChild(el('pre', '(unreadable reply)', 'diverge')); return box; };
  grid.appendChild(calls('Gold calls', i.gold)); grid.appendChild(calls('Model calls', i.calls));
  d.appendChild(grid);
  if (i.steps.length) { d.appendChild(el('strong', 'Execution trace'));
    i.steps.forEach((s, k) => d.appendChild(el('pre', (k + 1) + '. ' + (s.ok ? 'ok' : 'error ' + s.kind) + ' → ' + JSON.stringify(s.observation), s.ok ? undefined : 'diverge'))); }
  d.appendChild(el('strong', 'Raw reply')); d.appendChild(el('pre', i.reply));
}
[fModel, fDb, fOutcome].forEach((s) => s.addEventListener('change', show));
show();
})();
`;
