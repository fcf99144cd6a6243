import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { peerRunOf, sideBySide } from '../../bench/side-by-side.js';

const demo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'seeds', 'demo');
const figures = '{"wall_s": 30.5, "cpu_s": 29, "peak_rss_mb": 120.4, "slot_items": 20, "sel_items": 19}';

describe('side by side with another builder', () => {
  test("reads the peer's figures from its last line, and says what is wrong with them", () => {
    expect(peerRunOf(`building...\n${figures}\n`)).toEqual({
      wall_s: 30.5,
      cpu_s: 29,
      peak_rss_mb: 120.4,
      slot_items: 20,
      sel_items: 19,
    });
    expect(() => peerRunOf('done')).toThrow(/last line is not JSON: "done"/);
    expect(() => peerRunOf('{"wall_s": 1, "cpu_s": "2"}')).toThrow(/lack cpu_s, peak_rss_mb, slot_items, sel_items/);
  });

  test('a round runs the peer, then a cold generate, and gives their ratios', async () => {
    const [row] = await sideBySide({ peer: `echo progress >&2; echo '${figures}'`, rounds: 1, birdDir: demo });
    // The demo's SLOT/SEL: 50 questions, all verified.
    expect(row).toMatch(
      /^\| 1 \| 29\.00 s \/ \d+\.\d\d s = \*\*\d+\.\d×\*\* \| 30\.50 s \/ \d+\.\d\d s = \*\*\d+\.\d×\*\* \| 120 MB \/ main \d+ MB \| 20 \+ 19 \/ 50 \+ 50 \|$/,
    );
  }, 120_000);

  test('a peer that fails stops the comparison', async () => {
    await expect(sideBySide({ peer: 'exit 3', rounds: 1, birdDir: demo })).rejects.toThrow(
      'the peer command exited with 3',
    );
  });
});
