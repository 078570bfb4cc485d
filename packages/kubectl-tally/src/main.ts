import { KubeApiError } from '@tally-ipam/controller-kit/client';
import { type Invocation, parseInvocation, UsageError } from './args.js';
import { leaksListing, readLeaks } from './commands/leaks.js';
import { poolsListing, scopeOf } from './commands/pools.js';
import { readWho, whoListing } from './commands/who.js';
import { readWhy } from './commands/why.js';
import { helpText } from './help.js';
import { type Connection, connect } from './kube/config.js';
import { readPools } from './kube/pools.js';
import { cutValue } from './view/bounds.js';
import { type Listing, renderDocument, renderListing } from './view/output.js';
import { parseTarget } from './view/target.js';
import { whyLines } from './view/why.js';

/** Where a run writes: stdout for results, stderr for errors and notes. */
export interface Streams {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** Exit statuses, as kubectl's: 1 for a failure, 2 for a command line that cannot be run. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

class CommandError extends Error {
  override readonly name = 'CommandError';
}

function onePositional(invocation: Invocation, what: string): string {
  const [value, ...extra] = invocation.positionals;
  if (value === undefined) throw new UsageError(`${invocation.command} needs ${what}`);
  if (extra.length > 0)
    throw new UsageError(`${invocation.command} takes one ${what}, got also "${cutValue(extra[0] ?? '')}"`);
  return value;
}

function noPositionals(invocation: Invocation): void {
  const [extra] = invocation.positionals;
  if (extra !== undefined) throw new UsageError(`${invocation.command} takes no arguments, got "${cutValue(extra)}"`);
}

async function run(invocation: Invocation, connection: Connection, streams: Streams): Promise<void> {
  const scope = scopeOf(invocation, connection.defaultNamespace);
  const now = Date.now();
  const print = (listing: Listing): void => {
    const rendered = renderListing(listing, invocation.output);
    if (rendered.stdout) streams.stdout(rendered.stdout);
    if (rendered.stderr) streams.stderr(rendered.stderr);
  };
  switch (invocation.command) {
    case 'pools':
      noPositionals(invocation);
      print(poolsListing(await readPools(connection.client, scope), invocation, now));
      return;
    case 'who': {
      const parsed = parseTarget(onePositional(invocation, 'an <address|CIDR>'));
      if (!parsed.ok) throw new UsageError(`who: ${parsed.message}`);
      print(whoListing(parsed.target, await readWho(connection.client, parsed.target, scope), now));
      return;
    }
    case 'why': {
      const name = onePositional(invocation, 'a <claim> name');
      if (invocation.allNamespaces) throw new UsageError('why reads one claim: name its namespace with -n, not -A');
      const namespace = scope.namespace ?? connection.defaultNamespace;
      const report = await readWhy(connection.client, namespace, name, invocation.pageSize);
      if (!report) throw new CommandError(`IPAddressClaim "${cutValue(name)}" not found in namespace "${namespace}"`);
      streams.stdout(
        renderDocument(
          { apiVersion: 'kubectl-tally/v1', kind: 'ClaimReport', ...report },
          whyLines(report, now),
          invocation.output,
        ),
      );
      return;
    }
    case 'leaks':
      noPositionals(invocation);
      print(
        leaksListing(
          await readLeaks(connection.client, scope),
          now,
          scope.namespace ? `in namespace ${scope.namespace}` : 'in any namespace',
        ),
      );
      return;
    case undefined:
      streams.stdout(`${helpText(undefined)}\n`);
  }
}

function messageOf(error: unknown): string {
  if (error instanceof KubeApiError && error.statusCode === 403) {
    return `${error.message} (your RBAC does not allow this read; kubectl tally reads pools, IPAddresses, claims, ledgers and Events)`;
  }
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
    await run(invocation, connect({ kubeconfig: invocation.kubeconfig, context: invocation.context }), streams);
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError;
    streams.stderr(
      `error: ${messageOf(error)}\n${usage ? `See 'kubectl tally ${invocation.command} --help' for usage.\n` : ''}`,
    );
    return usage ? EXIT_USAGE : EXIT_FAILURE;
  }
}
