/**
 * The sections of docs/ARCHITECTURE.md generated from rules.ts: the package table, the graph of allowed imports,
 * the rules per package and the known exceptions. Each lives between `<!-- BEGIN GENERATED: name -->` and
 * `<!-- END GENERATED: name -->`; the rest of the document is written by hand.
 */
import type { Rules } from './check.js';
import { LAYERS, type Role } from './rules.js';
import { packageNameOf, type Workspace } from './workspace.js';

const SCOPE = '@tally-ipam/';

function short(name: string): string {
  return name.startsWith(SCOPE) ? name.slice(SCOPE.length) : name;
}

function nodeId(name: string): string {
  return short(name).replace(/[^a-z0-9]/gi, '_');
}

function code(value: string): string {
  return `\`${value}\``;
}

function list(values: readonly string[], empty: string): string {
  return values.length === 0 ? empty : values.map((value) => code(short(value))).join(', ');
}

const ROLE_TITLES: Readonly<Record<Role, string>> = {
  library: 'libraries (published)',
  'test-support': 'test support',
  app: 'apps',
  e2e: 'end-to-end',
  tool: 'tools (private)',
};

const ROLE_ORDER: readonly Role[] = ['app', 'e2e', 'tool', 'library', 'test-support'];

/** The package table: name, folder, role, purpose. */
export function renderPackageTable(rules: Rules, dirs: ReadonlyMap<string, string>): string {
  const rows = Object.entries(rules.packages).map(
    ([name, rule]) =>
      `| ${code(short(name))} | ${code(`${dirs.get(name) ?? '?'}/`)} | ${rule.role} | ${rule.purpose} |`,
  );
  return ['| package | folder | role | what it is for |', '|---|---|---|---|', ...rows].join('\n');
}

/** A Mermaid graph of what may import what: solid arrows ship, dashed ones only serve tests and tools. */
export function renderGraph(rules: Rules): string {
  const lines = ['```mermaid', 'flowchart TB'];
  for (const role of ROLE_ORDER) {
    const members = Object.entries(rules.packages).filter(([, rule]) => rule.role === role);
    if (members.length === 0) continue;
    lines.push(`  subgraph ${role.replace(/-/g, '_')}_layer["${ROLE_TITLES[role]}"]`);
    for (const [name] of members) lines.push(`    ${nodeId(name)}["${short(name)}"]`);
    lines.push('  end');
  }
  for (const [name, rule] of Object.entries(rules.packages)) {
    if (rule.shipped !== undefined) {
      for (const to of rule.shipped) lines.push(`  ${nodeId(name)} --> ${nodeId(to)}`);
    } else {
      for (const role of LAYERS[rule.role].shipped) {
        lines.push(`  ${nodeId(name)} -->|"any"| ${role.replace(/-/g, '_')}_layer`);
      }
    }
    for (const edge of rule.scoped ?? []) {
      lines.push(`  ${nodeId(name)} -->|"${edge.onlyFrom.join(', ')} only"| ${nodeId(edge.to)}`);
    }
    if (rule.development !== undefined) {
      for (const to of rule.development) lines.push(`  ${nodeId(name)} -.-> ${nodeId(to)}`);
    } else {
      for (const role of LAYERS[rule.role].development) {
        lines.push(`  ${nodeId(name)} -.->|"any"| ${role.replace(/-/g, '_')}_layer`);
      }
    }
  }
  for (const exception of rules.exceptions.filter((entry) => entry.kind === 'import')) {
    lines.push(`  ${nodeId(exception.from)} ==>|"exception: ${exception.files.join(', ')}"| ${nodeId(exception.to)}`);
  }
  lines.push('```');
  return lines.join('\n');
}

/** The rules per package: what its shipped code may import, what its tests may import besides, what it may not. */
export function renderRuleTable(rules: Rules): string {
  const rows = Object.entries(rules.packages).map(([name, rule]) => {
    const shipped = [
      rule.shipped === undefined
        ? `any ${LAYERS[rule.role].shipped.join(', any ') || 'nothing'} package`
        : list(rule.shipped, rule.scoped?.length ? '' : 'no workspace package'),
      ...(rule.scoped ?? []).map((edge) => `${code(short(edge.to))} from ${edge.onlyFrom.map(code).join(', ')} only`),
    ]
      .filter((part) => part !== '')
      .join('; ');
    const development =
      rule.development !== undefined
        ? list(rule.development, 'nothing more')
        : `any ${LAYERS[rule.role].development.join(', any ') || 'nothing'} package`;
    const forbidden = (rule.forbiddenExternals ?? [])
      .map((entry) => `${code(`${entry.prefix}…`)} (${entry.in === 'shipped' ? 'in src/' : 'anywhere'}): ${entry.why}`)
      .join('; ');
    return `| ${code(short(name))} | ${rule.role} | ${shipped} | ${development} | ${forbidden || '—'} |`;
  });
  return [
    '| package | role | `src/` may import | tests, benches, scripts may also import | may not import |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The layering every rule fits, one row per role. */
export function renderLayerTable(): string {
  const rows = (Object.entries(LAYERS) as [Role, (typeof LAYERS)[Role]][]).map(
    ([role, layer]) =>
      `| ${role} | ${layer.shipped.join(', ') || 'nothing from the workspace'} | ${layer.development.join(', ') || 'nothing from the workspace'} |`,
  );
  return ['| role | its `src/` may import | its tests, benches, scripts may import |', '|---|---|---|', ...rows].join(
    '\n',
  );
}

/** The known exceptions: what, where, why, and the way out. */
export function renderExceptionTable(rules: Rules): string {
  const rows = rules.exceptions.map(
    (entry) =>
      `| ${entry.kind === 'file cycle' ? `within ${code(short(entry.from))}` : `${code(short(entry.from))} → ${code(short(entry.to))}`} | ${entry.kind} | ${entry.files.map(code).join(', ')} | ${entry.reason} | ${entry.wayOut} |`,
  );
  return ['| edge | kind | files | why it is there | way out |', '|---|---|---|---|---|', ...rows].join('\n');
}

/**
 * The graph as it is: for each package, the workspace packages its shipped code (`src/`) imports, and those only its
 * tests, benches and scripts import, read from the sources (import sites, not declared dependencies).
 */
export function renderImportTable(rules: Rules, workspace: Workspace): string {
  const names = new Set(workspace.packages.map((pkg) => pkg.name));
  const order = Object.keys(rules.packages);
  const rank = (name: string): number => (order.includes(name) ? order.indexOf(name) : order.length);
  const rows = [...workspace.packages]
    .sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name))
    .map((pkg) => {
      const shipped = new Set<string>();
      const other = new Set<string>();
      for (const site of pkg.imports) {
        const target = packageNameOf(site.specifier);
        if (target === undefined || target === pkg.name || !names.has(target)) continue;
        (site.context === 'src' ? shipped : other).add(target);
      }
      const testsOnly = [...other].filter((name) => !shipped.has(name));
      const sorted = (values: Iterable<string>): string[] => [...values].sort((a, b) => rank(a) - rank(b));
      return `| ${code(short(pkg.name))} | ${list(sorted(shipped), 'nothing')} | ${list(sorted(testsOnly), '—')} |`;
    });
  return ['| package | its `src/` imports | its tests, benches, scripts also import |', '|---|---|---|', ...rows].join(
    '\n',
  );
}

export function generatedSections(
  rules: Rules,
  dirs: ReadonlyMap<string, string>,
  workspace: Workspace,
): Record<string, string> {
  return {
    packages: renderPackageTable(rules, dirs),
    imports: renderImportTable(rules, workspace),
    graph: renderGraph(rules),
    layers: renderLayerTable(),
    rules: renderRuleTable(rules),
    exceptions: renderExceptionTable(rules),
  };
}

const MARKER = /<!-- BEGIN GENERATED: ([a-z-]+) -->\n[\s\S]*?<!-- END GENERATED: \1 -->/g;

/**
 * The document with every generated section replaced by its current content. Throws when the document lacks a
 * section or names one that is not generated, so a renamed marker cannot silently stop being checked.
 */
export function withGeneratedSections(document: string, sections: Readonly<Record<string, string>>): string {
  const seen = new Set<string>();
  const updated = document.replace(MARKER, (_match, name: string) => {
    const content = sections[name];
    if (content === undefined)
      throw new Error(`docs/ARCHITECTURE.md has a generated section "${name}" no rule renders`);
    seen.add(name);
    return `<!-- BEGIN GENERATED: ${name} -->\n${content}\n<!-- END GENERATED: ${name} -->`;
  });
  const missing = Object.keys(sections).filter((name) => !seen.has(name));
  if (missing.length > 0) {
    throw new Error(
      `docs/ARCHITECTURE.md lacks the generated sections ${missing.join(', ')} (BEGIN/END GENERATED markers)`,
    );
  }
  return updated;
}
