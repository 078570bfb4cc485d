/**
 * Rewrites the generated sections of docs/ARCHITECTURE.md from rules.ts (the rest of the document is left as
 * written). test/docs.test.ts fails when the document and the rules disagree; this is the fix it names.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedSections, withGeneratedSections } from '../src/doc.js';
import { ARCHITECTURE_DOC, WORKSPACE_ROOT } from '../src/paths.js';
import { KNOWN_EXCEPTIONS, PACKAGE_RULES } from '../src/rules.js';
import { readWorkspace } from '../src/scan.js';
import { packageDirs } from '../src/workspace.js';

const dirs = packageDirs(WORKSPACE_ROOT);
const path = join(WORKSPACE_ROOT, ARCHITECTURE_DOC);
const before = readFileSync(path, 'utf8');
const after = withGeneratedSections(
  before,
  generatedSections({ packages: PACKAGE_RULES, exceptions: KNOWN_EXCEPTIONS }, dirs, readWorkspace(WORKSPACE_ROOT)),
);
writeFileSync(path, after);
console.log(before === after ? `${ARCHITECTURE_DOC}: up to date` : `${ARCHITECTURE_DOC}: generated sections rewritten`);
