import { parseArgs } from 'node:util';
import { cutValue, MAX_ARGUMENT_LENGTH, MAX_ARGUMENTS } from './view/bounds.js';
import { parseMinAge, parseWindow } from './view/duration.js';

export const COMMANDS = ['pools', 'who', 'why', 'leaks'] as const;
export type CommandName = (typeof COMMANDS)[number];

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The ETA's default window: an hour of allocations says what a pool is doing now, not last week. */
export const DEFAULT_WINDOW = '1h';

/**
 * How old a leak must be to be listed by default: an entry written just before its IPAddress, or an IPAddress whose
 * claim was deleted a moment ago, is an allocation or release in flight; Tally's collector acts on orphans after a
 * minute.
 */
export const DEFAULT_MIN_AGE = '1m';

export interface Invocation {
  readonly command: CommandName | undefined;
  readonly positionals: readonly string[];
  readonly help: boolean;
  readonly output: OutputFormat;
  readonly namespace: string | undefined;
  readonly allNamespaces: boolean;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly windowMs: number;
  /** `leaks`: leaks younger than this are left out (those of unknown age are kept). */
  readonly minAgeMs: number;
  readonly pageSize: number;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  window: { type: 'string' },
  'min-age': { type: 'string' },
  'chunk-size': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Most objects one list request asks for; the API server caps it at its own limit anyway. */
const MAX_PAGE_SIZE = 10_000;

function isCommand(word: string | undefined): word is CommandName {
  return word !== undefined && (COMMANDS as readonly string[]).includes(word);
}

/**
 * The command line, bounded before it is read: at most `MAX_ARGUMENTS` words of at most `MAX_ARGUMENT_LENGTH`
 * characters. Flags go anywhere (kubectl's habit: `kubectl tally why -n ns claim` and `why claim -n ns`).
 */
export function parseInvocation(argv: readonly string[]): Invocation {
  if (argv.length > MAX_ARGUMENTS) throw new UsageError(`too many arguments: ${argv.length}, at most ${MAX_ARGUMENTS}`);
  argv.forEach((word, index) => {
    if (word.length > MAX_ARGUMENT_LENGTH) {
      throw new UsageError(
        `argument ${index + 1} is ${word.length} characters, at most ${MAX_ARGUMENT_LENGTH}: "${cutValue(word)}"`,
      );
    }
  });
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  if (first !== undefined && !isCommand(first)) {
    throw new UsageError(`unknown command "${cutValue(first)}" (commands: ${COMMANDS.join(', ')})`);
  }
  const output = values.output ?? 'table';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(output)) {
    throw new UsageError(`--output "${cutValue(output)}" is not one of json, yaml, wide (default: a table)`);
  }
  if (values.namespace !== undefined && values['all-namespaces'] === true) {
    throw new UsageError('--namespace and --all-namespaces exclude each other');
  }
  const window = values.window ?? DEFAULT_WINDOW;
  const windowMs = parseWindow(window);
  if (windowMs === undefined) {
    throw new UsageError(
      `--window "${cutValue(window)}" is not a duration of one unit: 90s, 30m, 2h, 1d (at most 366d)`,
    );
  }
  const minAge = values['min-age'] ?? DEFAULT_MIN_AGE;
  const minAgeMs = parseMinAge(minAge);
  if (minAgeMs === undefined) {
    throw new UsageError(
      `--min-age "${cutValue(minAge)}" is not a duration of one unit: 0s, 90s, 30m, 2h, 1d (at most 366d)`,
    );
  }
  const chunk = values['chunk-size'] ?? '500';
  const pageSize = /^[1-9][0-9]{0,4}$/.test(chunk) ? Number(chunk) : Number.NaN;
  if (!(pageSize <= MAX_PAGE_SIZE)) {
    throw new UsageError(`--chunk-size "${cutValue(chunk)}" is not a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
  return {
    command: first,
    positionals: rest,
    help: values.help === true,
    output: output as OutputFormat,
    namespace: values.namespace,
    allNamespaces: values['all-namespaces'] === true,
    kubeconfig: values.kubeconfig,
    context: values.context,
    windowMs,
    minAgeMs,
    pageSize,
  };
}
