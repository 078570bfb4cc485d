import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPOSITORY_ROOT } from './guide.js';
import { type Page, parsePage } from './markdown.js';

/**
 * The reference pages outside the guide: every package's, app's and tool's README, the e2e README, each package's
 * own `docs/` pages, the repository's `docs/*.md` and its design notes, `docs/design/*.md`. Read as the guide's pages
 * are, so the same checks apply.
 */

/** The folders whose children are workspace packages (pnpm-workspace.yaml), and e2e. */
const PACKAGE_PARENTS = ['packages', 'apps', 'tools'] as const;

function markdownIn(dir: string): string[] {
  const absolute = join(REPOSITORY_ROOT, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `${dir}/${name}`);
}

/** Repository-relative paths of the reference pages, sorted. */
export function referencePaths(): string[] {
  const paths: string[] = [...markdownIn('docs'), ...markdownIn('docs/design'), 'e2e/README.md'];
  for (const parent of PACKAGE_PARENTS) {
    for (const name of readdirSync(join(REPOSITORY_ROOT, parent)).sort()) {
      const readme = `${parent}/${name}/README.md`;
      if (existsSync(join(REPOSITORY_ROOT, readme))) paths.push(readme);
      paths.push(...markdownIn(`${parent}/${name}/docs`));
    }
  }
  return paths.sort();
}

/** One reference page by repository-relative path; throws when it does not exist. */
export function referencePage(path: string): Page {
  return parsePage(path, readFileSync(join(REPOSITORY_ROOT, path), 'utf8'));
}

export function referencePages(): Page[] {
  return referencePaths().map(referencePage);
}
