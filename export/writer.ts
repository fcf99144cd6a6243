import { makeDirectoryAsync } from '../core/directories.js';
import { createHash } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../core/hash.js';
import { temporarySibling, writeFileAtomic } from '../pipeline/files.js';

/**
 * Writes an export's files: a file whose content hash is the one the last export recorded
 * (and that still exists) is left alone; files the last export wrote and this one did not
 * are removed. Big files are streamed from their pieces: an export's text (hundreds of
 * megabytes) is never one string, and the parts many lines share (tool specs) are written
 * from bytes encoded once (shared-parts.ts).
 */

/** A piece of a file: text, or bytes encoded once for every line that holds them. */
export type Piece = string | Uint8Array;

/** A line: its text, or the pieces it is written from (without its newline). */
export type Line = string | readonly Piece[];

export class ExportWriter {
  private readonly files: Record<string, string> = {};
  written = 0;

  constructor(
    private readonly out: string,
    private readonly previous: Readonly<Record<string, string>>,
  ) {}

  async write(relative: string, content: string | Uint8Array): Promise<void> {
    const hash = sha256(typeof content === 'string' ? content : Buffer.from(content));
    if (!this.claim(relative, hash) || (await this.unchanged(relative, hash))) return;
    await writeFileAtomic(path.join(this.out, relative), content);
    this.written++;
  }

  /** A file of lines, each ended by a newline. */
  writeLines(relative: string, lines: Iterable<Line>): Promise<void> {
    return this.writePieces(relative, linePieces(lines));
  }

  /** A file of these pieces, streamed to a temporary sibling while hashed, then renamed into place. */
  async writePieces(relative: string, pieces: Iterable<Piece>): Promise<void> {
    const file = path.join(this.out, relative);
    const { tmp, hash } = await streamToTemporary(file, pieces);
    if (!this.claim(relative, hash) || (await this.unchanged(relative, hash))) {
      await rm(tmp, { force: true });
      return;
    }
    await rename(tmp, file);
    this.written++;
  }

  /** The files written (relative path → content hash), once the last export's other files are removed. */
  async finish(): Promise<Record<string, string>> {
    for (const stale of Object.keys(this.previous).filter((f) => !(f in this.files)))
      await rm(path.join(this.out, stale), { force: true });
    return this.files;
  }

  /** Records the file's hash; false if this export wrote the same content there already (a database's REST tools, per split). */
  private claim(relative: string, hash: string): boolean {
    if (this.files[relative] === hash) return false;
    this.files[relative] = hash;
    return true;
  }

  private async unchanged(relative: string, hash: string): Promise<boolean> {
    return this.previous[relative] === hash && (await exists(path.join(this.out, relative)));
  }
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

const NEWLINE = Buffer.from('\n');

function* linePieces(lines: Iterable<Line>): Iterable<Piece> {
  for (const line of lines) {
    if (typeof line === 'string') yield line;
    else yield* line;
    yield NEWLINE;
  }
}

/** Bytes gathered before a write: few system calls, little memory. */
const BATCH_BYTES = 1 << 22;
/** Buffers per writev (the system's IOV_MAX is at least 1024). */
const MAX_BUFFERS = 1024;

async function streamToTemporary(file: string, pieces: Iterable<Piece>): Promise<{ tmp: string; hash: string }> {
  await makeDirectoryAsync(path.dirname(file));
  const tmp = temporarySibling(file);
  const handle = await open(tmp, 'w');
  const hash = createHash('sha256');
  const batch = new Batch();
  const flush = async () => {
    const buffers = batch.take();
    for (const buffer of buffers) hash.update(buffer);
    for (let i = 0; i < buffers.length; i += MAX_BUFFERS) await handle.writev(buffers.slice(i, i + MAX_BUFFERS));
  };
  try {
    for (const piece of pieces) {
      batch.add(piece);
      if (batch.size >= BATCH_BYTES) await flush();
    }
    await flush();
  } catch (error) {
    await handle.close();
    await rm(tmp, { force: true });
    throw error;
  }
  await handle.close();
  return { tmp, hash: hash.digest('hex') };
}

/** Pieces on their way to one write: runs of text encoded together, bytes as they are. */
class Batch {
  private texts: string[] = [];
  private buffers: Uint8Array[] = [];
  /** About the bytes held (text counted by its length). */
  size = 0;

  add(piece: Piece): void {
    if (typeof piece === 'string') this.texts.push(piece);
    else {
      this.encodeTexts();
      this.buffers.push(piece);
    }
    this.size += piece.length;
  }

  take(): Uint8Array[] {
    this.encodeTexts();
    const buffers = this.buffers;
    this.buffers = [];
    this.size = 0;
    return buffers;
  }

  private encodeTexts(): void {
    if (this.texts.length === 0) return;
    this.buffers.push(Buffer.from(this.texts.join('')));
    this.texts = [];
  }
}
