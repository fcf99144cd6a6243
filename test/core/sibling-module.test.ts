import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { siblingModule } from '../../core/sibling-module.js';

/** The module to fork beside another: the build's `.js` as it is, the sources' `.ts` through tsx. */

const dir = path.join(path.sep, 'app', 'runtime', 'sql');

test('beside a built module: the .js sibling, forked as it is', () => {
  expect(siblingModule(pathToFileURL(path.join(dir, 'pool.js')).href, 'worker')).toEqual({
    path: path.join(dir, 'worker.js'),
    execArgv: [],
  });
});

test('beside a source module: the .ts sibling, forked with tsx’s loader', () => {
  const { path: modulePath, execArgv } = siblingModule(pathToFileURL(path.join(dir, 'pool.ts')).href, 'worker');
  expect(modulePath).toBe(path.join(dir, 'worker.ts'));
  expect(execArgv).toHaveLength(2);
  expect(execArgv[0]).toBe('--import');
  expect(execArgv[1]).toMatch(/^file:\/\/.*\/node_modules\/tsx\//);
});
