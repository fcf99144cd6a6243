import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { packageRoot } from '../../core/package-root.js';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { mergeReports } from '../../eval/report/write.js';
import { generateDemo, run } from './fixtures.js';

/**
 * The report page as a person sees it: rendered in headless Chromium (Debian's package), with
 * no console errors, its four charts drawn, the headline and ReAct tables filled and the
 * drill-down opening on an item. The screenshot is kept in test-output/ (path printed).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.warn(`report page test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

(available ? test : test.skip)(
  'renders offline with its charts and tables, and merges runs',
  async () => {
    await run(root, { models: ['oracle', 'baseline:knn'], mode: 'react', report: 'react' });
    await run(root, { models: ['baseline:knn'], report: 'direct' });
    const page = await mergeReports([path.join(root, 'react'), path.join(root, 'direct')], path.join(root, 'merged'));
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
      const tab = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
      const errors: string[] = [];
      const requests: string[] = [];
      tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      tab.on('pageerror', (e) => errors.push(e.message));
      tab.on('request', (r) => !r.url().startsWith('file:') && requests.push(r.url()));
      await tab.goto(`file://${page}`);
      expect(errors).toEqual([]);
      expect(requests).toEqual([]); // self-contained: nothing fetched
      const charts = await tab.evaluate(() =>
        [...document.querySelectorAll('canvas')].map((c) => {
          const chart = (
            window as unknown as {
              Chart: { getChart(c: HTMLCanvasElement): { data: { datasets: unknown[] } } | undefined };
            }
          ).Chart.getChart(c);
          return { id: c.id, datasets: chart?.data.datasets.length ?? 0 };
        }),
      );
      expect(charts.map((c) => c.id)).toEqual(['by-db', 'by-difficulty', 'errors', 'by-construct']);
      expect(charts.every((c) => c.datasets > 0)).toBe(true);
      // Three models (knn in both runs, told apart by run), a header row each table.
      expect(await tab.locator('#headline tr').count()).toBe(4);
      expect(await tab.locator('#headline').textContent()).toContain('baseline:knn (direct)');
      expect(await tab.locator('#react tr').count()).toBe(3);
      await tab.locator('#items details summary').first().click();
      expect(await tab.locator('#items details[open]').textContent()).toContain('Gold calls');
      // Kept after the test (test-output/ is not committed): look at it.
      const screenshot = path.join(packageRoot(), 'test-output', 'eval-report.png');
      mkdirSync(path.dirname(screenshot), { recursive: true });
      await tab.screenshot({ path: screenshot, fullPage: false });
      console.log(`report screenshot: ${screenshot}`);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
