import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importGraph, layerReport } from './import-graph.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the layering of the sources (docs/ARCHITECTURE.md)', () => {
  const report = layerReport(importGraph(root));

  it('has no import from a layer into one above it', () => {
    expect(report.upward).toEqual([]);
  });

  it('has no pair of folders importing each other', () => {
    expect(report.twoWay).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(report.cycles).toEqual([]);
  });
});

describe('the layering check', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    };
    write('core/a.ts', "import type { B } from '../pipeline/b.js';\n");
    write('pipeline/b.ts', "import { a } from '../core/a.js';\nexport const c = () => import('./c.js');\n");
    write('pipeline/c.ts', "export { b } from './b.js';\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds upward imports, two-way folder pairs and cycles, dynamic imports and re-exports included', () => {
    const report = layerReport(importGraph(dir));
    expect(report.upward).toEqual([`core${path.sep}a.ts -> pipeline${path.sep}b.ts`]);
    expect(report.twoWay).toEqual(['core -> pipeline']);
    expect(report.cycles.map((c) => c.sort())).toEqual([
      [`core${path.sep}a.ts`, `pipeline${path.sep}b.ts`, `pipeline${path.sep}c.ts`],
    ]);
  });
});
