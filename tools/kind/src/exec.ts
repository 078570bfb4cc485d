import { spawn } from 'node:child_process';

export interface RunOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Written to the child's stdin, then closed. */
  readonly input?: string;
  /** Killed (SIGKILL) after this long; the error says so. */
  readonly timeoutMs?: number;
  /** Called with each complete output line (stdout and stderr) as it arrives. */
  readonly onLine?: (line: string) => void;
}

export interface RunResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Output kept per stream: enough for any answer we parse, bounded for commands that print a lot. */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

function cut(text: string, max = 2_000): string {
  return text.length > max ? `…${text.slice(-max)}` : text;
}

/** Runs a command to completion; never throws for a non-zero exit (see `run`). */
export async function runCommand(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const child = spawn(command, [...args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let partial = '';
  const onChunk = (chunk: Buffer, toStdout: boolean): void => {
    const text = chunk.toString('utf8');
    if (toStdout) stdout = (stdout + text).slice(-MAX_OUTPUT_CHARS);
    else stderr = (stderr + text).slice(-MAX_OUTPUT_CHARS);
    if (options.onLine) {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    }
  };
  child.stdout?.on('data', (chunk: Buffer) => onChunk(chunk, true));
  child.stderr?.on('data', (chunk: Buffer) => onChunk(chunk, false));
  if (options.input !== undefined) child.stdin?.end(options.input);
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
  try {
    const exitCode = await new Promise<number>((resolve, reject) => {
      child.once('error', (error) => reject(new Error(`could not run ${command}: ${error.message}`, { cause: error })));
      child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
    if (partial && options.onLine) options.onLine(partial);
    if (timedOut) {
      throw new Error(`${command} ${args.slice(0, 3).join(' ')} did not finish within ${options.timeoutMs} ms`);
    }
    return { exitCode, stdout, stderr };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Runs a command and returns its stdout; a non-zero exit is an error naming the command and its last output. */
export async function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  const result = await runCommand(command, args, options);
  if (result.exitCode !== 0) {
    throw new Error(
      `${command} ${cut(args.join(' '), 200)} exited with ${result.exitCode}: ${cut((result.stderr || result.stdout).trim())}`,
    );
  }
  return result.stdout;
}
