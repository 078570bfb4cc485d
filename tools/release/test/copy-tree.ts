import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { run } from '../src/workspace.js';

/**
 * A copy of the tree as git sees it (tracked and new files, nothing ignored) with the root node_modules linked in:
 * steps that rewrite files (`changeset version`) run there, never in the work tree.
 */
export function copyTree(root: string, prefix: string): string {
  const copy = mkdtempSync(join(tmpdir(), prefix));
  const files = run('git', ['ls-files', '-co', '--exclude-standard', '-z'], root).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(root, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(root, file), join(copy, file));
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}
