import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectLicense, licenseIn } from '../../pipeline/sources/license.js';

/** A source's license, as the dataset card passes it on: read from the source when it says, assumed for silent BIRD. */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-license-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('license detection', () => {
  test('names as sources write them; the first mention wins', () => {
    expect(
      licenseIn('the real BIRD dev set (…), licensed CC BY-SA 4.0; this folder is shared under the same license'),
    ).toBe('cc-by-sa-4.0');
    expect(
      licenseIn('[![License](https://img.shields.io/badge/License-CC%20BY%20SA%204.0-orange.svg)] CC-BY-SA-4.0'),
    ).toBe('cc-by-sa-4.0');
    expect(licenseIn('Creative Commons Attribution-NonCommercial 4.0 International')).toBe('cc-by-nc-4.0');
    expect(licenseIn('CC BY-NC-SA 4.0')).toBe('cc-by-nc-sa-4.0');
    expect(licenseIn('CC BY 4.0')).toBe('cc-by-4.0');
    expect(licenseIn('Licensed under the Apache License, Version 2.0')).toBe('apache-2.0');
    expect(licenseIn('MIT License\n\nCopyright (c) 2024')).toBe('mit');
    expect(licenseIn('License: MIT')).toBe('mit');
    expect(licenseIn('now CC BY-SA 4.0 (was CC BY-NC 4.0)')).toBe('cc-by-sa-4.0');
    expect(licenseIn('a submit button; MITigation')).toBeUndefined();
  });

  test('a LICENSE file speaks before the README; a README naming BIRD marks the source as BIRD', async () => {
    writeFileSync(
      path.join(dir, 'README.md'),
      'Derived from BIRD-SQL (https://bird-bench.github.io). Licensed CC BY-SA 4.0.',
    );
    expect(await detectLicense(dir, 'bird')).toEqual({ id: 'cc-by-sa-4.0', from: 'README.md', bird: true });
    writeFileSync(path.join(dir, 'LICENSE'), 'Creative Commons Attribution 4.0 International');
    expect(await detectLicense(dir, 'jsonl')).toEqual({ id: 'cc-by-4.0', from: 'LICENSE', bird: true });
  });

  test("silent BIRD layout: BIRD's license, assumed; silent generic layout: unknown", async () => {
    expect(await detectLicense(dir, 'bird')).toEqual({ id: 'cc-by-sa-4.0', from: 'bird-layout', bird: true });
    expect(await detectLicense(dir, 'jsonl')).toEqual({ id: 'unknown', from: 'none', bird: false });
    // A README about something else, in BIRD's layout, is not BIRD.
    writeFileSync(path.join(dir, 'README.md'), 'Our questions, in the same layout as BIRD dev.');
    expect(await detectLicense(dir, 'bird')).toEqual({ id: 'unknown', from: 'none', bird: false });
  });
});
