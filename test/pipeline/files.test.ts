import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { removeAbandonedTemporaries } from '../../pipeline/files.js';

describe('removeAbandonedTemporaries', () => {
  test("a killed writer's temporary siblings go; a live writer's and every other file stay", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-files-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', '']).pid;
      mkdirSync(path.join(dir, 'slot'));
      const files = {
        abandoned: `slot/shop.jsonl.${dead}.1cd5375c.tmp`,
        live: `slot/shop.jsonl.${process.pid}.0a1b2c3d.tmp`,
        output: 'slot/shop.jsonl',
        other: 'notes.tmp',
      };
      for (const file of Object.values(files)) writeFileSync(path.join(dir, file), 'x');
      await removeAbandonedTemporaries(dir);
      const left = readdirSync(dir, { recursive: true }).map(String).sort();
      expect(left).toEqual(['notes.tmp', 'slot', files.output, files.live].sort());
      await expect(removeAbandonedTemporaries(path.join(dir, 'missing'))).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
