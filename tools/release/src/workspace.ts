import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';

/** The repository this package lives in. */
export const REPOSITORY_ROOT: string = fileURLToPath(new URL('../../../', import.meta.url));

export interface Workspace {
  readonly name: string;
  /** Relative to the root, e.g. `packages/allocator`. */
  readonly dir: string;
  readonly version: string;
  readonly private: boolean;
}

const WorkspaceFile = z.object({ packages: z.array(z.string().min(1)) });
const PackageJson = z.object({ name: z.string().min(1), version: z.string().min(1), private: z.boolean().optional() });

/** The workspace packages of a tree (pnpm-workspace.yaml globs of the form `dir/*` or `dir`), sorted by name. */
export function listWorkspaces(root: string): Workspace[] {
  const file = join(root, 'pnpm-workspace.yaml');
  const globs = WorkspaceFile.parse(parse(readFileSync(file, 'utf8'))).packages;
  const dirs = globs.flatMap((glob) => {
    if (!glob.endsWith('/*')) return [glob];
    const parent = glob.slice(0, -2);
    return existsSync(join(root, parent)) ? readdirSync(join(root, parent)).map((name) => `${parent}/${name}`) : [];
  });
  return dirs
    .filter((dir) => existsSync(join(root, dir, 'package.json')))
    .map((dir) => {
      const path = join(root, dir, 'package.json');
      const parsed = PackageJson.safeParse(JSON.parse(readFileSync(path, 'utf8')));
      if (!parsed.success) throw new Error(`${path}: ${z.prettifyError(parsed.error)}`);
      return { name: parsed.data.name, dir, version: parsed.data.version, private: parsed.data.private === true };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Runs a command and returns its stdout; a failure carries the command, the directory and everything it printed. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  try {
    return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const detail = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) failed: ${detail.message}\n${detail.stdout ?? ''}${detail.stderr ?? ''}`,
      { cause: error },
    );
  }
}
