import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { EvalSummary, Interval, ModelSummary, ResultLine } from '../summary.js';

/**
 * The report page: one self-contained HTML file (Chart.js inlined from node_modules, no CDN,
 * works offline from file://) with the headline table per run and model, completion, intent
 * and slot F1 by database, difficulty and SQL construct, the error categories (Live
 * API-Bench's Figure 2), ReAct loop statistics and a paginated per-item drill-down. Model
 * output is data: it reaches the page as JSON in a script tag (every `<` escaped) or inside
 * base64, and is shown with `textContent`, never as markup.
 *
 * Size: what the item list needs up front (outcome, error, question) is plain JSON; what only
 * an opened item shows (calls, trace, replies: most of the bytes) is one gzip member in base64
 * that the page inflates with `DecompressionStream` when an item is first opened (a file://
 * page cannot fetch results.jsonl beside it).
 */

export interface ReportRun {
  /** The run's folder name: tells runs apart when their own names coincide. */
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

/** A headline row: one model of one run (`run` indexes the runs), named uniquely on the page. */
type Row = ModelSummary & { run: number; label: string; errorShares: Record<string, Share> };

/** An error category's share of the scored attempts, with its count and 95% interval. */
type Share = Interval & { count: number };

/** What the attempts at one question share (across models, runs and repeats), listed once. */
interface Task {
  item: string;
  db: string;
  difficulty: string | null;
  question: string;
}

/** One attempt in the list: enough to filter it and to show its summary line. */
interface ListedItem {
  row: number;
  task: number;
  repeat: number;
  kind: ResultLine['kind'];
  completed: boolean;
  /** BFCL category, `none`, or `failed` (no result: a fault of the run). */
  error: string;
}

/** What only an opened item shows: packed (see the module comment). */
interface Details {
  tasks: { evidence: string; gold: unknown[] }[];
  items: ItemDetail[];
}

interface ItemDetail {
  verdict: string;
  calls: unknown[] | null;
  steps: unknown[];
  reply: string;
  divergence: number | null;
}

export async function renderReportPage(runs: readonly ReportRun[]): Promise<string> {
  const rows = headlineRows(runs);
  const { tasks, items, details } = itemsOf(runs, rows);
  const title = `nl2api evaluation: ${[...new Set(runs.map((r) => `${r.summary.dataset} ${r.summary.formulation.toUpperCase()}`))].join(', ')}`;
  const data = {
    title,
    runs: runs.map((r) => ({
      folder: r.name,
      name: r.summary.name ?? null,
      dataset: r.summary.dataset,
      formulation: r.summary.formulation,
      settings: r.summary.settings,
    })),
    rows,
    tasks,
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
<header><h1>${escapeHtml(title)}</h1><ul id="runs"></ul></header>
<main>
<section><h2>Headline</h2><div class="scroll"><table id="headline"></table></div>
<p class="note">Completion: the final output equals the gold answer, over every attempt (a failed one, a fault of the run, counts as not completed), with its 95% bootstrap interval; “scored” leaves the failed attempts out. Intent and slot F1 after Live API-Bench (hover for precision and recall); “matched intents”: slot F1 over the items where at least one gold tool was named (n of them), as the paper reads it. Sequence match after NESTFUL; stability after CallNavi (with --repeats). Shots: in-context examples, “–” where a run uses none (native tools, REST).</p></section>
<section class="charts">
${figure('by-db', 'by database', { measures: true, wide: true })}
${figure('by-difficulty', 'by difficulty', { measures: true })}
${figure('errors', 'Error categories (BFCL), share of scored attempts', {})}
${figure('by-construct', 'by SQL construct', { measures: true, wide: true })}
</section>
<section id="react-section" hidden><h2>ReAct loops</h2><table id="react"></table></section>
<section id="chain-section" hidden><h2>Chains, hop by hop</h2><div class="scroll"><table id="chain"></table></div>
<p class="note">Hop k: the share of attempts with a k-th hop that made it (its endpoint, with the gold's arguments, the bridged ones as sent); under it, that hop's intent (its endpoint called in its place) and slot score (the share of its arguments right). The first wrong hop's kind: missing (no call of its endpoint in its place), wrong arguments (a value from the question), bridge error (every earlier hop right, and a value carried from the previous response wrong). Completion by the chain's number of hops.</p></section>
<section><h2>Items</h2>
<div class="filters"><label>Run <select id="f-row"></select></label><label>Database <select id="f-db"></select></label><label>Outcome <select id="f-outcome"><option value="">all</option><option value="completed">completed</option><option value="not">not completed</option><option value="failed">failed (no result)</option></select></label><span class="pager"></span><span id="count"></span></div>
<div id="items"></div>
<div class="filters"><span class="pager"></span></div></section>
</main>
<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script type="application/octet-stream" id="report-details">${(await gzipped(JSON.stringify(details))).toString('base64')}</script>
<script>${await chartJs()}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** A chart's frame: `measures`, a measure selector (filled by the page) before the caption; `wide`, the grid's whole width. */
function figure(id: string, caption: string, options: { measures?: boolean; wide?: boolean }): string {
  const measure = options.measures ? `<select id="m-${id}" aria-label="measure"></select> ` : '';
  return `<figure${options.wide ? ' class="wide"' : ''}><figcaption>${measure}${caption}</figcaption><div class="box" id="${id}-box"><canvas id="${id}"></canvas></div></figure>`;
}

/**
 * One row per model of each run, labelled by the run's name for it; where two rows share a
 * name (the same model and settings in two runs), the run's folder is added.
 */
function headlineRows(runs: readonly ReportRun[]): Row[] {
  // A summary written before `--name` existed has no name: the model stands for it.
  const named = runs.flatMap((run, r) =>
    run.summary.models.map((m) => ({ ...m, run: r, base: (m.name as string | undefined) ?? m.model })),
  );
  return named.map(({ base, ...m }) => ({
    ...m,
    label: named.filter((other) => other.base === base).length > 1 ? `${base} (${runs[m.run].name})` : base,
    errorShares: Object.fromEntries(
      Object.entries(m.errors).map(([category, count]) => [category, { count, ...wilson(count, m.scored) }]),
    ),
  }));
}

/**
 * The 95% interval of a share (Wilson's score interval): the summary counts error categories
 * without intervals, and a closed form costs nothing beside a bootstrap per category.
 */
export function wilson(count: number, n: number): Interval {
  if (n === 0) return { mean: 0, low: 0, high: 0 };
  const z = 1.959964;
  const p = count / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return { mean: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** The attempts of every run, in order: the list's entries, the questions they share, and each one's packed details. */
function itemsOf(
  runs: readonly ReportRun[],
  rows: readonly Row[],
): { tasks: Task[]; items: ListedItem[]; details: Details } {
  const rowOf = new Map(rows.map((row, i) => [JSON.stringify([row.run, row.model]), i]));
  const taskOf = new Map<string, number>();
  const tasks: Task[] = [];
  const items: ListedItem[] = [];
  const details: Details = { tasks: [], items: [] };
  runs.forEach((run, r) => {
    for (const line of run.lines) {
      const row = rowOf.get(JSON.stringify([r, line.model]));
      if (row === undefined) throw new Error(`${run.name}: results of ${line.model}, absent from its summary`);
      const key = JSON.stringify([line.item, line.db, line.question, line.evidence, line.goldCalls]);
      let task = taskOf.get(key);
      if (task === undefined) {
        task = tasks.length;
        taskOf.set(key, task);
        tasks.push({ item: line.item, db: line.db, difficulty: line.difficulty, question: line.question });
        details.tasks.push({ evidence: line.evidence, gold: line.goldCalls });
      }
      items.push({
        row,
        task,
        repeat: line.repeat,
        kind: line.kind,
        completed: line.attempt?.scores.completed ?? false,
        error: line.attempt ? (line.attempt.scores.error ?? 'none') : 'failed',
      });
      details.items.push(detailOf(line));
    }
  });
  return { tasks, items, details };
}

function detailOf(line: ResultLine): ItemDetail {
  const { attempt } = line;
  return {
    verdict: attempt
      ? `${attempt.scores.answer.category}: ${attempt.scores.answer.message}`
      : `${line.failure?.category}: ${line.failure?.message}`,
    calls: attempt?.sql !== undefined ? [{ sql: attempt.sql }] : (attempt?.parsed ?? null),
    steps: (attempt?.steps ?? []).map((step) => ({ ...step, observation: trimmed(step.observation) })),
    reply: attempt?.replies.map((r) => r.content).join('\n---\n') ?? '',
    divergence: attempt ? divergence(attempt.parsed, line.goldCalls) : null,
  };
}

/** Rows of a call's output the page shows: the outputs were most of a page's bytes; results.jsonl keeps the 20 the model saw. */
const SHOWN_ROWS = 5;

/** Where an observation keeps its rows (environment.ts observationJson): a table's, a list's, a REST response's. */
const ROW_LISTS = new Set(['rows', 'values', 'items']);

/** An observation cut to SHOWN_ROWS rows, values or items (`more: true` when cut), as the trace shows it. */
function trimmed(observation: unknown): unknown {
  if (Array.isArray(observation))
    return observation.length > SHOWN_ROWS ? { first: observation.slice(0, SHOWN_ROWS), more: true } : observation;
  if (observation === null || typeof observation !== 'object') return observation;
  const cut = Object.entries(observation).map(([key, value]): [string, unknown] =>
    ROW_LISTS.has(key) && Array.isArray(value) && value.length > SHOWN_ROWS
      ? [key, value.slice(0, SHOWN_ROWS)]
      : [key, value],
  );
  const wasCut = cut.some(([key, value]) => value !== (observation as Record<string, unknown>)[key]);
  return wasCut ? { ...Object.fromEntries(cut), more: true } : observation;
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

/** zlib's default level, off the main thread: level 9 took 0.1 s more of a 1,000-item run's main thread for 1 % fewer bytes. */
const gzipped = promisify(gzip);

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
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header ul{margin:4px 0 0;padding:0;list-style:none;color:#c9cfdb;font-size:13px}
main{padding:8px 24px 40px;max-width:1400px;box-sizing:border-box}section{background:#fff;border-radius:8px;padding:12px 16px;margin:14px 0;box-shadow:0 1px 2px #0001}
h2{font-size:16px;margin:4px 0 10px}table{border-collapse:collapse;width:100%}th,td{padding:4px 5px;border-bottom:1px solid #e4e7ec;text-align:right}
td{white-space:nowrap}th{background:#f0f2f5;font-weight:600;vertical-align:bottom}th:first-child,td:first-child{text-align:left}
#headline{font-size:13px}#headline td.name{white-space:normal;text-align:left;min-width:8em;max-width:14em;overflow-wrap:anywhere}
#headline th:nth-child(-n+4){text-align:left}#headline td:nth-child(-n+4){text-align:left}
td small{display:block;color:#5b6475;font-size:11px}.scroll{overflow-x:auto}.note{color:#5b6475;font-size:12px}
.charts{display:grid;grid-template-columns:1fr 2fr;gap:12px;background:none;box-shadow:none;padding:0}@media(max-width:900px){.charts{grid-template-columns:1fr}}
figure{background:#fff;border-radius:8px;margin:0;padding:12px;box-shadow:0 1px 2px #0001;min-width:0}figure.wide{grid-column:1/-1}
.box{position:relative;height:340px}figcaption{font-weight:600;margin-bottom:6px}figcaption select{font-weight:600}
.filters{margin:6px 0;display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center}.pager button{margin:0 2px}.pager .page{margin:0 6px}
details{border-bottom:1px solid #e4e7ec;padding:6px 0}summary{cursor:pointer}
.ok{color:#0a7a33;font-weight:600}.ko{color:#b3261e;font-weight:600}pre{background:#f6f7f9;padding:8px;border-radius:6px;white-space:pre-wrap;word-break:break-word;max-height:320px;overflow:auto;margin:4px 0}
.diverge{background:#fdecea}.grid2{display:grid;grid-template-columns:1fr 1fr;gap:10px}.muted{color:#5b6475}
`;

/**
 * The page's own script: fills the tables, draws the charts, filters and pages the drill-down.
 * Plain DOM, text only. Every chart keeps each bar's n and interval on its dataset (`stats`)
 * for the tooltip, and never skips a category's tick label.
 */
const PAGE_SCRIPT = `
(function(){
const data = JSON.parse(document.getElementById('report-data').textContent);
// An attempt's place in the packed details.
data.items.forEach((i, k) => { i.index = k; });
const pct = (x) => (100 * x).toFixed(1) + '%';
const f3 = (x) => x.toFixed(3);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };

// Header: each run's settings, leaving out what it does not use (null: shots with native tools or REST).
data.runs.forEach((r) => {
  const settings = Object.entries(r.settings).filter(([, v]) => v !== null).map(([k, v]) => k + '=' + v).join(' ');
  document.getElementById('runs').appendChild(el('li', r.folder + (r.name && r.name !== r.folder ? ' (' + r.name + ')' : '') + ': ' + r.dataset + ' ' + r.formulation.toUpperCase() + ' · ' + settings));
});

// A cell: its text, an optional second line (an interval, an n) and an optional hover text.
function table(node, head, rows, nameColumns) {
  const tr = el('tr'); head.forEach((h) => tr.appendChild(el('th', h))); node.appendChild(tr);
  rows.forEach((r) => {
    const row = el('tr');
    r.forEach((c, k) => {
      const cell = typeof c === 'object' ? c : { text: c };
      const td = el('td', cell.text, k < (nameColumns || 0) ? 'name' : undefined);
      if (cell.sub) td.appendChild(el('small', cell.sub));
      if (cell.title) td.title = cell.title;
      row.appendChild(td);
    });
    node.appendChild(row);
  });
}
const missing = '–';
// A measure with its interval (or n) under it; the interval drops the unit the value shows.
const measure = (x, f, sub) => x ? { text: f(x.mean), sub: sub === undefined ? (f(x.low) + '–' + f(x.high)).replace(/%/g, '') : sub } : missing;
table(document.getElementById('headline'),
  ['run', 'model', 'mode', 'tools', 'shots', 'obfus\u00adcated', 'short\u00adlist', 're\u00adpeats', 'items', 'failed', 'completion (95% CI)', 'completion, scored only',
    'intent F1', 'slot F1', 'slot F1, matched intents', 'full seq. (partial)', 'stabil\u00adity', 'SQL baseline'],
  data.rows.map((m) => {
    const s = data.runs[m.run].settings;
    const setting = (v) => v === null || v === undefined ? missing : String(v);
    return [m.label, m.model, setting(s.mode), setting(s.tools), setting(s.shots), s.obfuscate ? 'yes' : 'no',
      s.shortlist === 100 ? 'all' : setting(s.shortlist) + '%', setting(s.repeats), String(m.attempts), String(m.failed),
      measure(m.completion, pct), measure(m.completionScored, pct, m.scored + ' scored'),
      Object.assign(measure(m.intentF1, f3), { title: 'precision ' + f3(m.intentPrecision) + ', recall ' + f3(m.intentRecall) }),
      Object.assign(measure(m.slotF1, f3), { title: 'precision ' + f3(m.slotPrecision) + ', recall ' + f3(m.slotRecall) }),
      m.slotF1Matched ? measure(m.slotF1Matched, f3, 'n = ' + m.slotF1Matched.n) : missing,
      { text: pct(m.fullSequenceMatch), sub: pct(m.partialSequenceMatch) },
      m.stability === undefined ? missing : f3(m.stability),
      m.sqlBaseline ? measure(m.sqlBaseline.completion, pct, m.sqlBaseline.attempts + ' attempts') : missing];
  }), 2);
const reacts = data.rows.filter((m) => m.react);
if (reacts.length) {
  document.getElementById('react-section').hidden = false;
  table(document.getElementById('react'), ['run', 'average loops', 'out of budget', 'stuck'],
    reacts.map((m) => [m.label, m.react.averageLoops.toFixed(2), pct(m.react.outOfBudgetRate), pct(m.react.stuckRate)]));
}

const chains = data.rows.filter((m) => m.chain);
if (chains.length) {
  document.getElementById('chain-section').hidden = false;
  const hops = Math.max(...chains.map((m) => m.chain.hopAccuracy.length));
  const kinds = Object.keys(chains[0].chain.errors);
  const lengths = [...new Set(chains.flatMap((m) => Object.keys(m.chain.byHops)))].sort();
  table(document.getElementById('chain'),
    ['run', ...Array.from({ length: hops }, (_, k) => 'hop ' + (k + 1)), ...kinds.map((k) => k.replace('_', ' ')), ...lengths.map((l) => 'completion, ' + l)],
    chains.map((m) => [m.label,
      ...Array.from({ length: hops }, (_, k) => k < m.chain.hopAccuracy.length
        ? { text: pct(m.chain.hopAccuracy[k]), sub: 'intent ' + pct(m.chain.hopIntent[k]) + ', slot ' + f3(m.chain.hopSlot[k]) }
        : missing),
      ...kinds.map((k) => String(m.chain.errors[k] ?? 0)),
      ...lengths.map((l) => m.chain.byHops[l] ? measure(m.chain.byHops[l].completion, pct, 'n = ' + m.chain.byHops[l].n) : missing)]));
}

const palette = ['#3366cc', '#dc3912', '#ff9900', '#109618', '#990099', '#0099c6', '#dd4477', '#66aa00', '#b82e2e', '#316395'];
// Values are drawn in display units: completion and shares in %, F1 on 0–1.
const MEASURES = {
  completion: { name: 'Completion', unit: '%', scale: 100, scoredOnly: false },
  intentF1: { name: 'Intent F1', unit: '', scale: 1, scoredOnly: true },
  slotF1: { name: 'Slot F1', unit: '', scale: 1, scoredOnly: true },
};
const shown = (unit, x) => unit === '%' ? x.toFixed(1) + '%' : x.toFixed(3);
function tooltipLabel(ctx) {
  const s = ctx.dataset.stats[ctx.dataIndex], u = ctx.dataset.unit;
  return ctx.dataset.label + ': ' + shown(u, ctx.raw) + ' (95% CI ' + shown(u, s.low) + '–' + shown(u, s.high) + '; '
    + (s.count === undefined ? 'n = ' : s.count + ' of ') + s.n + (ctx.dataset.scoredOnly ? ' scored' : '') + ')';
}
const valueAxis = (unit, title) => ({ min: 0, max: unit === '%' ? 100 : 1, title: { display: true, text: title } });
const allTicks = { ticks: { autoSkip: false } };
function breakdownChart(id, groupOf, horizontal) {
  const keys = [...new Set(data.rows.flatMap((m) => Object.keys(groupOf(m))))];
  const select = document.getElementById('m-' + id);
  Object.entries(MEASURES).forEach(([k, v]) => { select.appendChild(el('option', v.name)).value = k; });
  const datasets = (key) => { const def = MEASURES[key]; return data.rows.map((m, i) => {
    const bars = keys.map((k) => { const g = groupOf(m)[k]; return g && g[key] ? g : null; });
    // minBarLength: a measured 0 shows as a sliver, unlike a group the run has no attempt in (null).
    return { label: m.label, backgroundColor: palette[i % palette.length], unit: def.unit, scoredOnly: def.scoredOnly, minBarLength: 2,
      data: bars.map((g) => g && g[key].mean * def.scale),
      stats: bars.map((g) => g && { n: def.scoredOnly ? g.scored : g.n, low: g[key].low * def.scale, high: g[key].high * def.scale }) };
  }); };
  const axes = (key) => ({ [horizontal ? 'x' : 'y']: valueAxis(MEASURES[key].unit, MEASURES[key].name + (MEASURES[key].unit ? ' (%)' : '')), [horizontal ? 'y' : 'x']: allTicks });
  if (horizontal) document.getElementById(id + '-box').style.height = (70 + keys.length * (10 + 9 * data.rows.length)) + 'px';
  const chart = new Chart(document.getElementById(id), {
    type: 'bar',
    data: { labels: keys, datasets: datasets('completion') },
    options: { animation: false, responsive: true, maintainAspectRatio: false, indexAxis: horizontal ? 'y' : 'x',
      scales: axes('completion'), plugins: { tooltip: { callbacks: { label: tooltipLabel } } } },
  });
  select.addEventListener('change', () => { chart.data.datasets = datasets(select.value); chart.options.scales = axes(select.value); chart.update(); });
}
breakdownChart('by-db', (m) => m.byDatabase);
breakdownChart('by-difficulty', (m) => m.byDifficulty);
breakdownChart('by-construct', (m) => m.byConstruct, true);
const categories = Object.keys(data.rows[0] ? data.rows[0].errorShares : {});
document.getElementById('errors-box').style.height = Math.max(340, 120 + 30 * data.rows.length) + 'px';
new Chart(document.getElementById('errors'), {
  type: 'bar',
  data: { labels: data.rows.map((m) => m.label), datasets: categories.map((c, i) => ({ label: c, unit: '%', scoredOnly: true,
    backgroundColor: c === 'none' ? '#c7cdd6' : palette[i % palette.length],
    data: data.rows.map((m) => 100 * m.errorShares[c].mean),
    stats: data.rows.map((m) => ({ n: m.scored, count: m.errorShares[c].count, low: 100 * m.errorShares[c].low, high: 100 * m.errorShares[c].high })) })) },
  options: { animation: false, responsive: true, maintainAspectRatio: false, indexAxis: 'y',
    scales: { x: Object.assign(valueAxis('%', '% of scored attempts'), { stacked: true }), y: { stacked: true, ticks: { autoSkip: false } } },
    plugins: { tooltip: { callbacks: { label: tooltipLabel } } } },
});

// The item list: every attempt, filtered, a page at a time.
const PAGE = 50;
const fRow = document.getElementById('f-row'), fDb = document.getElementById('f-db'), fOutcome = document.getElementById('f-outcome');
function options(select, values) { select.appendChild(el('option', 'all')).value = ''; values.forEach(([v, text]) => { select.appendChild(el('option', text)).value = v; }); }
options(fRow, data.rows.map((m, k) => [String(k), m.label]));
options(fDb, [...new Set(data.tasks.map((t) => t.db))].sort().map((db) => [db, db]));
const list = document.getElementById('items');
let chosen = [], page = 0;
const pagers = [...document.querySelectorAll('.pager')].map((node) => {
  const button = (text, title, to) => { const b = node.appendChild(el('button', text)); b.type = 'button'; b.title = title; b.addEventListener('click', () => { page = to(); show(); }); return b; };
  const first = button('«', 'first page', () => 0), prev = button('‹', 'previous page', () => page - 1);
  const label = node.appendChild(el('span', '', 'page'));
  const next = button('›', 'next page', () => page + 1), last = button('»', 'last page', () => pages() - 1);
  return { first, prev, label, next, last };
});
const pages = () => Math.max(1, Math.ceil(chosen.length / PAGE));
function choose() {
  const outcome = fOutcome.value;
  chosen = data.items.filter((i) => (!fRow.value || i.row === Number(fRow.value)) && (!fDb.value || data.tasks[i.task].db === fDb.value)
    && (!outcome || (outcome === 'completed' ? i.completed : outcome === 'failed' ? i.error === 'failed' : !i.completed)));
  page = 0;
  show();
}
function show() {
  page = Math.min(Math.max(page, 0), pages() - 1);
  list.textContent = '';
  const from = page * PAGE, shownItems = chosen.slice(from, from + PAGE);
  document.getElementById('count').textContent = (chosen.length ? (from + 1) + '–' + (from + shownItems.length) + ' of ' : '') + chosen.length + ' attempts'
    + (chosen.length < data.items.length ? ' (' + data.items.length + ' in all)' : '');
  pagers.forEach((p) => { p.label.textContent = 'page ' + (page + 1) + ' of ' + pages(); p.first.disabled = p.prev.disabled = page === 0; p.next.disabled = p.last.disabled = page >= pages() - 1; });
  shownItems.forEach((i) => {
    const task = data.tasks[i.task], row = data.rows[i.row];
    const d = el('details'); const s = el('summary');
    s.appendChild(el('span', i.completed ? '✓ ' : '✗ ', i.completed ? 'ok' : 'ko'));
    s.appendChild(el('span', task.item + (i.repeat ? ' #' + i.repeat : '') + (i.kind === 'sql' ? ' (SQL)' : '') + ' · ' + row.label + ' · ' + i.error + ' · '));
    s.appendChild(el('span', task.question, 'muted'));
    d.appendChild(s);
    d.addEventListener('toggle', () => {
      if (!d.open || d.dataset.filled) return;
      d.dataset.filled = 'yes';
      details().then((all) => detail(d, all.tasks[i.task], all.items[i.index]), (e) => d.appendChild(el('p', 'The details could not be read: ' + e, 'ko')));
    });
    list.appendChild(d);
  });
}
// The drill-down's data, gzip in base64, inflated once, when an item is first opened.
let packed;
function details() {
  packed = packed || (async () => {
    const bytes = Uint8Array.from(atob(document.getElementById('report-details').textContent), (c) => c.charCodeAt(0));
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
    return JSON.parse(text);
  })();
  return packed;
}
function detail(d, task, i) {
  d.appendChild(el('p', 'Evidence: ' + (task.evidence || '(none)')));
  d.appendChild(el('p', 'Answer: ' + i.verdict));
  if (i.divergence !== null) d.appendChild(el('p', 'Diverges from the gold at call ' + (i.divergence + 1) + '.', 'ko'));
  const grid = el('div', undefined, 'grid2');
  const calls = (title, list) => { const box = el('div'); box.appendChild(el('strong', title));
    (list || []).forEach((c, k) => box.appendChild(el('pre', JSON.stringify(c), k === i.divergence ? 'diverge' : undefined)));
    if (!list) box.appendChild(el('pre', '(unreadable reply)', 'diverge')); return box; };
  grid.appendChild(calls('Gold calls', task.gold)); grid.appendChild(calls('Model calls', i.calls));
  d.appendChild(grid);
  if (i.steps.length) { d.appendChild(el('strong', 'Execution trace'));
    i.steps.forEach((s, k) => d.appendChild(el('pre', (k + 1) + '. ' + (s.ok ? 'ok' : 'error ' + s.kind) + ' → ' + JSON.stringify(s.observation), s.ok ? undefined : 'diverge'))); }
  d.appendChild(el('strong', 'Raw reply')); d.appendChild(el('pre', i.reply));
}
[fRow, fDb, fOutcome].forEach((s) => s.addEventListener('change', choose));
choose();
})();
`;
