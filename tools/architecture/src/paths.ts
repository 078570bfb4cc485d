import { fileURLToPath } from 'node:url';

/** The repository root: this package reads the whole workspace. */
export const WORKSPACE_ROOT: string = fileURLToPath(new URL('../../../', import.meta.url));

/** The document whose generated sections come from rules.ts. */
export const ARCHITECTURE_DOC = 'docs/ARCHITECTURE.md';
