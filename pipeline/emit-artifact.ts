import path from 'node:path';
import type { Config } from '../config/schema.js';
import { sha256 } from '../core/hash.js';
import type { DatabaseInfo, Formulation } from '../core/model.js';
import { writeFileAtomic } from './files.js';

import type { ItemResult } from './samples.js';

/** What every formulation's emit writes from, and how it writes: atomically, each file recorded with its hash for the manifest. */

export interface EmittedFile {
  /** Relative to the output directory, `/`-separated. */
  path: string;
  sha256: string;
  bytes: number;
}

export async function writeArtifact(outDir: string, relative: string, content: string): Promise<EmittedFile> {
  await writeFileAtomic(path.join(outDir, ...relative.split('/')), content);
  return { path: relative, sha256: sha256(content), bytes: Buffer.byteLength(content) };
}

export interface DatabaseEmitInput {
  db: DatabaseInfo;
  datasetName: string;
  formulations: readonly Formulation[];
  /** The database's items, in instance index order. */
  items: readonly ItemResult[];
  config: Config;
  outDir: string;
  version: string;
}
