import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { packageRoot } from '../../core/package-root.js';
import { renderReportPage } from '../../eval/report/html.js';
import { mergeReports, readRun, runNames } from '../../eval/report/write.js';
import { generateDemo, run } from './fixtures.js';

/**
 * The report page as a person sees it: rendered in headless Chromium (Debian's package), with
 * no console errors and nothing fetched, every chart drawn with all its bars labelled and
 * each bar's n and interval in its tooltip, the headline telling runs of one model apart, the
 * item list paged over every attempt and the drill-down opening on an item. Screenshots are
 * kept in test-output/ (paths printed). And a page of 1,000 attempts stays small.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.warn(`report page test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

let root: string;
beforeAll(async () => {
  root = await generateDemo();
  await run(root, { models: ['oracle', 'baseline:knn'], mode: 'react', report: 'react' });
  await run(root, { models: ['baseline:knn'], report: 'direct' });
  await run(root, { models: ['baseline:knn'], tools: 'native', report: 'native' });
  // The same model and settings again: only the folder tells the two apart.
  cpSync(path.join(root, 'direct'), path.join(root, 'direct-again'), { recursive: true });
}, 180_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface ChartLike {
  data: { labels: string[]; datasets: { label: string; data: (number | null)[]; stats: unknown[] }[] };
  scales: Record<string, { ticks: unknown[] }>;
  options: { indexAxis?: string };
  tooltip: { setActiveElements(active: object[], at: object): void; body?: { lines: string[] }[] };
  update(): void;
}
type ChartWindow = { Chart: { getChart(c: HTMLCanvasElement): ChartLike | undefined } };

(available ? test : test.skip)(
  'renders offline: charts with every bar labelled and explained, run names, paging over all attempts',
  async () => {
    const dirs = ['react', 'direct', 'native', 'direct-again'].map((d) => path.join(root, d));
    const page = await mergeReports(dirs, path.join(root, 'merged'));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const tab = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors: string[] = [];
      const requests: string[] = [];
      tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      tab.on('pageerror', (e) => errors.push(e.message));
      tab.on('request', (r) => !r.url().startsWith('file:') && requests.push(r.url()));
      await tab.goto(`file://${page}`);

      const charts = await tab.evaluate(() =>
        [...document.querySelectorAll('canvas')].map((c) => {
          const chart = (window as unknown as ChartWindow).Chart.getChart(c)!;
          const categoryAxis = chart.options.indexAxis === 'y' ? 'y' : 'x';
          return {
            id: c.id,
            datasets: chart.data.datasets.length,
            labels: chart.data.labels.length,
            ticks: chart.scales[categoryAxis].ticks.length,
            // Every drawn bar carries its n and interval for the tooltip.
            explained: chart.data.datasets.every((d) =>
              d.data.every((v, k) => v === null || typeof (d.stats[k] as { n?: unknown })?.n === 'number'),
            ),
          };
        }),
      );
      expect(charts.map((c) => c.id)).toEqual(['by-db', 'by-difficulty', 'errors', 'by-construct']);
      for (const chart of charts) {
        expect(chart.datasets).toBeGreaterThan(0);
        expect({ id: chart.id, ticks: chart.ticks }).toEqual({ id: chart.id, ticks: chart.labels });
        expect(chart.explained).toBe(true);
      }
      expect(charts.find((c) => c.id === 'by-construct')!.labels).toBeGreaterThan(10);

      // A tooltip as a hover shows it: the value, its interval and its n.
      const tooltip = await tab.evaluate(() => {
        const chart = (window as unknown as ChartWindow).Chart.getChart(
          document.getElementById('by-construct') as HTMLCanvasElement,
        )!;
        chart.tooltip.setActiveElements([{ datasetIndex: 0, index: 0 }], { x: 0, y: 0 });
        chart.update();
        return chart.tooltip.body!.flatMap((b) => b.lines);
      });
      expect(tooltip.join('\n')).toMatch(/^.+: \d+\.\d% \(95% CI \d+\.\d%–\d+\.\d%; n = \d+\)$/);

      // The measure selector redraws a breakdown with F1 (0–1).
      await tab.selectOption('#m-by-db', 'slotF1');
      const slot = await tab.evaluate(() => {
        const chart = (window as unknown as ChartWindow).Chart.getChart(
          document.getElementById('by-db') as HTMLCanvasElement,
        )!;
        return chart.data.datasets.map((d) => d.data);
      });
      expect(slot.flat().every((v) => v === null || (v >= 0 && v <= 1))).toBe(true);

      // Headline: a row per (run, model); runs of one model told apart by their names, then by folder.
      const headline = await tab
        .locator('#headline tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.firstChild?.textContent ?? '')));
      const head = headline[0];
      for (const column of ['run', 'model', 'mode', 'tools', 'shots', 'items', 'failed', 'completion (95% CI)'])
        expect(head).toContain(column);
      for (const column of ['completion, scored only', 'intent F1', 'slot F1', 'slot F1, matched intents'])
        expect(head).toContain(column);
      const cell = (row: string[], column: string) => row[head.indexOf(column)];
      const byRun = new Map(headline.slice(1).map((row) => [cell(row, 'run'), row]));
      expect([...byRun.keys()]).toEqual([
        'oracle · react · prompt',
        'baseline:knn · react · prompt',
        'baseline:knn · direct · prompt (direct)',
        'baseline:knn · direct · native',
        'baseline:knn · direct · prompt (direct-again)',
      ]);
      expect(cell(byRun.get('baseline:knn · direct · native')!, 'shots')).toBe('–');
      expect(cell(byRun.get('baseline:knn · react · prompt')!, 'shots')).toBe('3');
      const header = await tab.locator('#runs li').allTextContents();
      expect(header.find((line) => line.startsWith('native:'))).not.toContain('shots=');
      expect(header.find((line) => line.startsWith('direct:'))).toContain('shots=3');
      expect(await tab.locator('#react tr').count()).toBe(3);
      // The page fits 1400 px: nothing overflows sideways, the headline's scroll box is not needed.
      expect(
        await tab.evaluate(() => {
          const box = document.querySelector('.scroll')!;
          return [document.documentElement.scrollWidth, box.scrollWidth - box.clientWidth];
        }),
      ).toEqual([1400, 0]);

      // The list pages over every attempt: 100 + 3 × 50.
      const count = () => tab.locator('#count').textContent();
      const first = () => tab.locator('#items summary').first().textContent();
      expect(await count()).toBe('1–50 of 250 attempts');
      const onFirstPage = await first();
      await tab.locator('.pager').first().getByTitle('next page').click();
      expect(await count()).toBe('51–100 of 250 attempts');
      expect(await first()).not.toBe(onFirstPage);
      await tab.locator('.pager').last().getByTitle('last page').click();
      expect(await count()).toBe('201–250 of 250 attempts');
      expect(await tab.locator('#items details').count()).toBe(50);
      expect(await tab.locator('.pager .page').first().textContent()).toBe('page 5 of 5');
      await tab.selectOption('#f-row', { label: 'baseline:knn · direct · native' });
      expect(await count()).toBe('1–50 of 50 attempts (250 in all)');
      await tab.selectOption('#f-row', '');

      // The drill-down, inflated from the packed details on first open.
      await tab.locator('#items details summary').first().click();
      const opened = tab.locator('#items details[open]');
      await opened.getByText('Raw reply').waitFor();
      expect(await opened.textContent()).toContain('Gold calls');
      expect(await opened.textContent()).toContain('Execution trace');

      expect(errors).toEqual([]);
      expect(requests).toEqual([]); // self-contained: nothing fetched
      // Kept after the test (test-output/ is not committed): look at them.
      const shots = path.join(packageRoot(), 'test-output');
      mkdirSync(shots, { recursive: true });
      await tab.screenshot({ path: path.join(shots, 'eval-report.png'), fullPage: true });
      await tab.locator('#headline').screenshot({ path: path.join(shots, 'eval-report-headline.png') });
      console.log(`report screenshots: ${shots}/eval-report.png, eval-report-headline.png`);
    } finally {
      await browser.close();
    }
  },
  120_000,
);

test('a page of 1,000 attempts stays under 3 MB', async () => {
  const { summary, lines } = await readRun(path.join(root, 'react'));
  // The run's real attempts repeated under new item ids (the summary need not count them).
  const many = Array.from({ length: 1000 }, (_, i) => ({ ...lines[i % lines.length], item: `slot/x/${i}` }));
  const html = await renderReportPage([{ name: 'many', summary, lines: many }]);
  expect(Buffer.byteLength(html)).toBeLessThan(3_000_000);
});

test('runs in folders of one name are told apart by their parent folders', () => {
  expect(runNames(['/evals/a/report', '/evals/b/report', '/evals/c'])).toEqual(['a/report', 'b/report', 'c']);
});
