import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * A folder's files and subfolders by name, sorted, symbolic links followed: a dataset
 * folder may link to data kept elsewhere (a shared disk, a download cache). Broken links
 * are left out.
 */
export async function folderEntries(dir: string): Promise<{ files: string[]; folders: string[] }> {
  const files: string[] = [];
  const folders: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    let kind: 'file' | 'folder' | undefined = entry.isFile() ? 'file' : entry.isDirectory() ? 'folder' : undefined;
    if (entry.isSymbolicLink()) {
      const target = await stat(path.join(dir, entry.name)).catch(() => undefined);
      kind = target?.isFile() ? 'file' : target?.isDirectory() ? 'folder' : undefined;
    }
    if (kind === 'file') files.push(entry.name);
    if (kind === 'folder') folders.push(entry.name);
  }
  return { files: files.sort(), folders: folders.sort() };
}
