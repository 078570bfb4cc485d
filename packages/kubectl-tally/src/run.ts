import { KubeApiError } from '@tally-ipam/controller-kit/client';
import { type Invocation, UsageError } from './args.js';
import { leaksListing, readLeaks } from './commands/leaks.js';
import { poolsListing, scopeOf } from './commands/pools.js';
import { readWho, whoListing } from './commands/who.js';
import { readWhy } from './commands/why.js';
import { helpText } from './help.js';
import { connect } from './kube/config.js';
import { readPools } from './kube/pools.js';
import type { Streams } from './streams.js';
import { cutValue } from './view/bounds.js';
import { leaksOlderThan } from './view/leaks.js';
import { type Listing, renderDocument, renderListing } from './view/output.js';
import { parseTarget } from './view/target.js';
import { whyLines } from './view/why.js';

/**
 * Running a command: loaded by main.ts only when a command runs, so that `--help` and a refused command line answer
 * without loading the Kubernetes client and the IPAM packages.
 */

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

/** Runs a parsed command line against the cluster its flags name; a read RBAC refuses says so. */
export async function runCommand(invocation: Invocation, streams: Streams): Promise<void> {
  try {
    await dispatch(invocation, streams);
  } catch (error) {
    if (error instanceof KubeApiError && error.statusCode === 403) {
      throw new Error(
        `${error.message} (your RBAC does not allow this read; kubectl tally reads pools, IPAddresses, claims, ledgers and Events)`,
        { cause: error },
      );
    }
    throw error;
  }
}

async function dispatch(invocation: Invocation, streams: Streams): Promise<void> {
  const connection = connect({ kubeconfig: invocation.kubeconfig, context: invocation.context });
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
          leaksOlderThan(await readLeaks(connection.client, scope), now, invocation.minAgeMs),
          now,
          scope.namespace ? `in namespace ${scope.namespace}` : 'in any namespace',
        ),
      );
      return;
    case undefined:
      streams.stdout(`${helpText(undefined)}\n`);
  }
}
