import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

export interface RunningFixture<T> {
  readonly child: ChildProcess;
  /** The first line the fixture printed, parsed. */
  readonly output: T;
  /** Resolves with the exit code or signal once the child is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly stderr: () => string;
}

/** Runs a TypeScript fixture from `test/fixtures` in a new Node process (through tsx) and waits for its first line. */
export async function runFixture<T>(
  fixture: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningFixture<T>> {
  const child = spawn(process.execPath, ['--import', 'tsx', `test/fixtures/${fixture}`, ...args], {
    cwd: packageDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const lines = createInterface({ input: child.stdout! });
  const firstLine = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then(({ code, signal }) =>
      reject(new Error(`fixture ${fixture} exited (${signal ?? code}) before printing; stderr:\n${stderr}`)),
    );
  });
  return { child, output: JSON.parse(firstLine) as T, exited, stderr: () => stderr };
}
