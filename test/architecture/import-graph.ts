import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The import graph of the sources, and what breaks the layering (docs/ARCHITECTURE.md):
 * folders are layers, each may import only from the layers below it; no module cycles.
 * Type-only imports count: they tie a module to another's shape just the same.
 */

/** Bottom to top. A folder imports only folders to its left (and itself). */
export const LAYERS = [
  'core',
  'runtime',
  'generators',
  'verifiers',
  'config',
  'pipeline',
  'eval',
  'export',
  'mcp',
  'cli',
  'bench',
] as const;

export interface ImportGraph {
  /** Module (path relative to the root) → the modules of ours it imports. */
  edges: Map<string, Set<string>>;
}

export interface LayerReport {
  /** `a -> b` where b's layer is above a's. */
  upward: string[];
  /** Folder pairs that import each other. */
  twoWay: string[];
  /** Import cycles between modules, each as its members. */
  cycles: string[][];
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

export function importGraph(root: string): ImportGraph {
  const edges = new Map<string, Set<string>>();
  for (const folder of LAYERS) {
    for (const file of sourceFiles(path.join(root, folder))) {
      const deps = new Set<string>();
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = path.resolve(path.dirname(file), match[1] ?? match[2]).replace(/\.js$/, '.ts');
        if (existsSync(target)) deps.add(path.relative(root, target));
      }
      edges.set(path.relative(root, file), deps);
    }
  }
  return { edges };
}

export function layerReport(graph: ImportGraph): LayerReport {
  const layerOf = (module: string) => LAYERS.indexOf(module.split(path.sep)[0] as (typeof LAYERS)[number]);
  const upward: string[] = [];
  const folderPairs = new Set<string>();
  for (const [from, deps] of graph.edges) {
    for (const to of deps) {
      if (layerOf(to) > layerOf(from)) upward.push(`${from} -> ${to}`);
      if (layerOf(to) !== layerOf(from)) folderPairs.add(`${LAYERS[layerOf(from)]} -> ${LAYERS[layerOf(to)]}`);
    }
  }
  const twoWay = [...folderPairs].filter((pair) => {
    const [a, b] = pair.split(' -> ');
    return a < b && folderPairs.has(`${b} -> ${a}`);
  });
  return { upward, twoWay, cycles: stronglyConnected(graph.edges).filter((c) => c.length > 1) };
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Tarjan's strongly connected components. */
function stronglyConnected(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return components;
}
