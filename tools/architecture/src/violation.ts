import type { KnownException, PackageRule } from './rules.js';

// What every check returns and reads, apart from check.ts so that the checks split out of it (cycles.ts) need not
// import it back.

export type RuleId =
  | 'rules-cover-workspace'
  | 'rules-fit-layers'
  | 'declared-dependencies'
  | 'allowed-imports'
  | 'forbidden-externals'
  | 'no-reach-into-packages'
  | 'no-cycles'
  | 'no-file-cycles'
  | 'exceptions-in-use';

export interface Violation {
  rule: RuleId;
  message: string;
}

export interface Rules {
  packages: Readonly<Record<string, PackageRule>>;
  exceptions: readonly KnownException[];
}
