/** metav1.LabelSelector: all `matchLabels` and all `matchExpressions` must hold (an empty selector matches all). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>> | undefined;
  readonly matchExpressions?: readonly LabelSelectorRequirement[] | undefined;
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[] | undefined;
}

/** Evaluates a selector against an object's labels with the API server's semantics. */
export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const actual = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (actual[key] !== value) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(actual, requirement.key);
    const value = actual[requirement.key];
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
        if (!present || value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        // Like the API server: an absent label satisfies NotIn.
        if (present && value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}

/**
 * The `labelSelector` query-string form of a selector (`a=b,c in (x,y),!d`), for list/watch requests so the API
 * server filters instead of the cache. Keys and values are sorted so equal selectors produce equal strings (the cache
 * shares one reflector per distinct selector string).
 */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts: string[] = [];
  for (const key of Object.keys(selector.matchLabels ?? {}).sort()) {
    parts.push(`${key}=${selector.matchLabels?.[key]}`);
  }
  const expressions = [...(selector.matchExpressions ?? [])].sort((a, b) => a.key.localeCompare(b.key));
  for (const { key, operator, values } of expressions) {
    const list = [...(values ?? [])].sort().join(',');
    switch (operator) {
      case 'In':
        parts.push(`${key} in (${list})`);
        break;
      case 'NotIn':
        parts.push(`${key} notin (${list})`);
        break;
      case 'Exists':
        parts.push(key);
        break;
      case 'DoesNotExist':
        parts.push(`!${key}`);
        break;
    }
  }
  return parts.join(',');
}
