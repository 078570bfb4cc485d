// Source files held to a length (src/length.ts): the real packages, and the check on made-up files.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FILE_LENGTH_BOUNDS, overlongFiles } from '../src/length.js';
import { WORKSPACE_ROOT } from '../src/paths.js';
import { sourceFiles, toPosix } from '../src/workspace.js';

describe('file lengths', () => {
  test.each(Object.entries(FILE_LENGTH_BOUNDS))(
    'no file of %s/src is over %i lines without a reason at its top',
    (dir, bound) => {
      const files = sourceFiles(join(WORKSPACE_ROOT, dir, 'src')).map((path) => ({
        path: toPosix(relative(WORKSPACE_ROOT, path)),
        text: readFileSync(path, 'utf8'),
      }));
      // The folder is right: it has source files.
      expect(files.length).toBeGreaterThan(0);
      expect(overlongFiles(files, bound)).toEqual([]);
    },
  );

  test('a long file is reported unless one of its first lines says why', () => {
    const long = (top: string): string => `${top}\n${'x;\n'.repeat(300)}`;
    expect(
      overlongFiles(
        [
          { path: 'a.ts', text: long('import x from "y";') },
          { path: 'b.ts', text: long('// Over 300 lines on purpose: one class.') },
          { path: 'c.ts', text: long('/**\n * Over 300 lines: a table.\n */') },
          { path: 'd.ts', text: 'x;\n'.repeat(300) },
          { path: 'e.ts', text: long('// Over 400 lines on purpose: another bound.') },
        ],
        300,
      ),
    ).toEqual([expect.stringContaining('a.ts has 301 lines, over 300'), expect.stringContaining('e.ts has 301 lines')]);
  });
});
