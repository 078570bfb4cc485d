import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Page, parsePage } from './markdown.js';

/** The repository root: the guide lives in `docs/guide/`, the apps this package runs in `apps/`. */
export const REPOSITORY_ROOT: string = fileURLToPath(new URL('../../../../', import.meta.url));
export const GUIDE_DIR = 'docs/guide';

/** The built IPAM controller, run as the image and `npm start` run it (tools may name an app's files). */
export const CONTROLLER_MAIN: string = join(REPOSITORY_ROOT, 'apps/ipam-controller/dist/main.js');
export const CONTROLLER_README: string = join(REPOSITORY_ROOT, 'apps/ipam-controller/README.md');
export const MANAGER_MANIFEST: string = join(REPOSITORY_ROOT, 'apps/ipam-controller/config/manager/manager.yaml');
export const NETWORK_POLICY: string = join(
  REPOSITORY_ROOT,
  'apps/ipam-controller/config/network-policy/network_policy.yaml',
);

/** Every page of the guide, in file-name order (the order their examples are applied in). */
export function guidePages(): Page[] {
  const dir = join(REPOSITORY_ROOT, GUIDE_DIR);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => parsePage(`${GUIDE_DIR}/${name}`, readFileSync(join(dir, name), 'utf8')));
}

/** One page by file name (`pools.md`); throws when the guide has no such page. */
export function guidePage(name: string): Page {
  const page = guidePages().find((candidate) => candidate.path === `${GUIDE_DIR}/${name}`);
  if (!page) throw new Error(`${GUIDE_DIR}/${name} does not exist`);
  return page;
}

/** `docs/guide/pools.md:42`: where a message points. */
export function at(page: Page, line: number): string {
  return `${page.path}:${line}`;
}
