/** clusterctl's variables in components files: drone/envsubst syntax, which clusterctl substitutes at install time. */

/** A `${NAME}`, `${NAME:=default}`, `${NAME=default}` or `${NAME:-default}` reference. */
export interface VariableReference {
  readonly text: string;
  readonly name: string;
  readonly defaultValue: string | undefined;
}

const VARIABLE = /\$\{([^}]*)\}/g;
const WELL_FORMED = /^([A-Z][A-Z0-9_]*)(?:(:=|=|:-)([^$}]*))?$/;

/** Every `${…}` in `text`; throws naming the reference when one is not a form clusterctl understands. */
export function findVariables(text: string): VariableReference[] {
  const found: VariableReference[] = [];
  for (const match of text.matchAll(VARIABLE)) {
    const inner = match[1] ?? '';
    const parsed = WELL_FORMED.exec(inner);
    if (!parsed?.[1]) {
      throw new Error(
        `variable reference ${match[0]} is not well formed: use \${NAME} or \${NAME:=default} with NAME in [A-Z0-9_]`,
      );
    }
    found.push({ text: match[0], name: parsed[1], defaultValue: parsed[2] ? (parsed[3] ?? '') : undefined });
  }
  return found;
}

/**
 * Replaces the variables as clusterctl does: a value from `values`, else the default; a variable with neither is an
 * error naming it (clusterctl refuses to install then, too).
 */
export function substituteVariables(text: string, values: Readonly<Record<string, string>> = {}): string {
  const missing = new Set<string>();
  for (const reference of findVariables(text)) {
    if (values[reference.name] === undefined && reference.defaultValue === undefined) missing.add(reference.name);
  }
  if (missing.size > 0) throw new Error(`variables without a value or default: ${[...missing].join(', ')}`);
  return text.replace(VARIABLE, (_whole, inner: string) => {
    const parsed = WELL_FORMED.exec(inner);
    const name = parsed?.[1] ?? '';
    return values[name] ?? parsed?.[3] ?? '';
  });
}
