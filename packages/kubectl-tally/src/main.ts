import { type Invocation, parseInvocation, UsageError } from './args.js';
import { helpText } from './help.js';
import type { Streams } from './streams.js';

/** Exit statuses, as kubectl's: 1 for a failure, 2 for a command line that cannot be run. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs one command line (the words after `kubectl tally`) and returns the exit status. */
export async function runKubectlTally(argv: readonly string[], streams: Streams): Promise<number> {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv);
  } catch (error) {
    streams.stderr(`error: ${messageOf(error)}\nSee 'kubectl tally --help' for usage.\n`);
    return EXIT_USAGE;
  }
  if (invocation.help) {
    streams.stdout(`${helpText(invocation.command)}\n`);
    return 0;
  }
  if (invocation.command === undefined) {
    streams.stdout(`${helpText(undefined)}\n`);
    return 0;
  }
  try {
    const { runCommand } = await import('./run.js');
    await runCommand(invocation, streams);
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError;
    streams.stderr(
      `error: ${messageOf(error)}\n${usage ? `See 'kubectl tally ${invocation.command} --help' for usage.\n` : ''}`,
    );
    return usage ? EXIT_USAGE : EXIT_FAILURE;
  }
}
