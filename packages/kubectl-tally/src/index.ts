/**
 * @tally-ipam/kubectl-tally: the `kubectl tally` plugin (its bin is `kubectl-tally`), read-only, and the pure pieces
 * it is built from, exported for other tools that show the same views.
 */
export {
  COMMANDS,
  type CommandName,
  DEFAULT_WINDOW,
  type Invocation,
  OUTPUT_FORMATS,
  type OutputFormat,
  parseInvocation,
  UsageError,
} from './args.js';
export { helpText } from './help.js';
export { EXIT_FAILURE, EXIT_USAGE, runKubectlTally } from './main.js';
export type { Streams } from './streams.js';
export { BAR_WIDTH, utilisationBar } from './view/bar.js';
export { ageOf, formatDuration, parseMinAge, parseWindow } from './view/duration.js';
export { type EtaInput, exhaustionEtaMs, formatEta } from './view/eta.js';
export { type HeldAddress, type HeldEntry, type Holding, joinHoldings } from './view/holdings.js';
export { type AddressRecord, type EntryRecord, findLeaks, type Leak, leaksOlderThan } from './view/leaks.js';
export {
  type ChainLink,
  type ChainObject,
  formatChain,
  linkOfKind,
  MAX_CHAIN_LENGTH,
  nextOwner,
  type OwnerLink,
  type OwnerLookup,
  walkOwnerChain,
} from './view/owner-chain.js';
export { cellText, renderTable } from './view/table.js';
export { MAX_TARGET_LENGTH, overlapsTarget, parseTarget, type Target, type TargetResult } from './view/target.js';
