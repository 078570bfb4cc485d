// What the dashboard test needs of PromQL and of the Prometheus text format, and no more: the series selectors a query
// names (metric name and label matchers), the labels its `by`/`without`/`on`/`ignoring` clauses name, and the samples
// a /metrics page holds. A small scanner rather than a full parser: the queries are ours, and what matters is that
// every name a query relies on is found, which the property test of this module checks.

/** One label matcher of a selector: `label op "value"`. */
export interface LabelMatcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** One series selector: `metric{matchers}` (a selector without a name has `metric` undefined). */
export interface SeriesSelector {
  readonly metric: string | undefined;
  readonly matchers: readonly LabelMatcher[];
}

/** What a query names: its selectors, and the labels of its grouping and vector-matching clauses. */
export interface QueryNames {
  readonly selectors: readonly SeriesSelector[];
  readonly clauseLabels: readonly string[];
}

/** Aggregation operators, functions and keywords: identifiers that are never metric names where they stand. */
const CLAUSE_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OPERATOR_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);
/** Aggregations may be followed by `by (...)` before their parenthesis, so they are known by name. */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);

const IDENTIFIER = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;

class Scanner {
  index = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new Error(`PromQL ${JSON.stringify(this.text)}: ${what} at offset ${this.index}`);
  }
  skipSpace(): void {
    while (this.index < this.text.length && /\s/.test(this.text[this.index] ?? '')) this.index += 1;
  }
  peek(): string {
    this.skipSpace();
    return this.text[this.index] ?? '';
  }
  match(pattern: RegExp): string | undefined {
    this.skipSpace();
    const found = pattern.exec(this.text.slice(this.index))?.[0];
    if (found) this.index += found.length;
    return found;
  }
  expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected ${JSON.stringify(char)}`);
    this.index += 1;
  }
  /** A quoted string (", ' or `), returned unquoted; escapes are kept as the value's text. */
  string(): string {
    const quote = this.peek();
    if (quote !== '"' && quote !== "'" && quote !== '`') this.fail('expected a string');
    let end = this.index + 1;
    while (end < this.text.length && this.text[end] !== quote) end += quote !== '`' && this.text[end] === '\\' ? 2 : 1;
    if (end >= this.text.length) this.fail('unterminated string');
    const value = this.text.slice(this.index + 1, end);
    this.index = end + 1;
    return value;
  }
  /** `{label op "value", ...}` after the opening brace has been seen. */
  matchers(): LabelMatcher[] {
    this.expect('{');
    const matchers: LabelMatcher[] = [];
    while (this.peek() !== '}') {
      const label = this.match(LABEL) ?? this.fail('expected a label name');
      const op = (this.match(/^(=~|!~|!=|=)/) ??
        this.fail(`expected a matcher operator after ${label}`)) as LabelMatcher['op'];
      matchers.push({ label, op, value: this.string() });
      if (this.peek() === ',') this.index += 1;
      else if (this.peek() !== '}') this.fail('expected "," or "}"');
    }
    this.index += 1;
    return matchers;
  }
  /** `(label, ...)` of a clause. */
  labelList(): string[] {
    this.expect('(');
    const labels: string[] = [];
    while (this.peek() !== ')') {
      labels.push(this.match(LABEL) ?? this.fail('expected a label name'));
      if (this.peek() === ',') this.index += 1;
      else if (this.peek() !== ')') this.fail('expected "," or ")"');
    }
    this.index += 1;
    return labels;
  }
}

/**
 * The selectors and clause labels of a PromQL expression. Grafana's variables (`$pool`, `${pool}`,
 * `$__rate_interval`) are skipped where they stand for a duration or a number and kept as text inside strings.
 * Throws, naming the expression and the offset, on text it cannot read (an unterminated string or matcher list).
 */
export function queryNames(expression: string): QueryNames {
  const scanner = new Scanner(expression);
  const selectors: SeriesSelector[] = [];
  const clauseLabels: string[] = [];
  while (scanner.peek() !== '') {
    const char = scanner.peek();
    if (char === '{') {
      selectors.push({ metric: undefined, matchers: scanner.matchers() });
    } else if (char === '[') {
      // A range or subquery: durations and Grafana's interval variables, no names.
      const end = expression.indexOf(']', scanner.index);
      if (end < 0) scanner.fail('unterminated "["');
      scanner.index = end + 1;
    } else if (char === '"' || char === "'" || char === '`') {
      scanner.string();
    } else if (char === '$') {
      scanner.index += 1;
      scanner.match(/^(\{[^}]*\}|[a-zA-Z0-9_]+)/);
    } else if (/[0-9.]/.test(char)) {
      scanner.match(/^[0-9.][0-9a-zA-Z_.+]*/);
    } else if (IDENTIFIER.test(expression.slice(scanner.index))) {
      const name = scanner.match(IDENTIFIER) ?? '';
      if (CLAUSE_KEYWORDS.has(name)) {
        if (scanner.peek() === '(') clauseLabels.push(...scanner.labelList());
      } else if (OPERATOR_KEYWORDS.has(name) || AGGREGATIONS.has(name)) {
        // an operator: nothing to record
      } else if (scanner.peek() === '(') {
        // A function or an aggregation: its arguments are scanned as the loop goes on.
      } else {
        selectors.push({ metric: name, matchers: scanner.peek() === '{' ? scanner.matchers() : [] });
      }
    } else {
      scanner.index += 1; // operators, parentheses, commas
    }
  }
  return { selectors, clauseLabels };
}

/** What a /metrics page exports: per sample name (`_bucket`, `_sum`, `_count` included), each label's values. */
export type ExportedSeries = ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text-format page (comments skipped). */
export function exportedSeries(page: string): ExportedSeries {
  const series = new Map<string, Map<string, Set<string>>>();
  for (const line of page.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const sample = SAMPLE_LINE.exec(line);
    if (!sample?.[1]) throw new Error(`/metrics line ${JSON.stringify(line)} is not a sample`);
    const labels = series.get(sample[1]) ?? new Map<string, Set<string>>();
    series.set(sample[1], labels);
    for (const [, label, value] of (sample[2] ?? '').matchAll(LABEL_PAIR)) {
      if (label === undefined || value === undefined) continue;
      const values = labels.get(label) ?? new Set<string>();
      values.add(value);
      labels.set(label, values);
    }
  }
  return series;
}

/**
 * What in a query the exported series do not have: a metric name no sample carries, a matcher on a label that
 * metric's samples lack, an equality matcher with a literal value no sample has (a Grafana variable's value is not
 * known here), a clause label none of the query's metrics carries. `targetLabels` are the labels Prometheus adds at
 * scrape time (`instance`, `job`): a query may group by them. Empty when everything is there.
 */
export function missingNames(expression: string, exported: ExportedSeries, targetLabels: readonly string[]): string[] {
  const { selectors, clauseLabels } = queryNames(expression);
  const problems: string[] = [];
  const metrics: string[] = [];
  for (const selector of selectors) {
    const metric =
      selector.metric ?? selector.matchers.find((matcher) => matcher.label === '__name__' && matcher.op === '=')?.value;
    if (metric === undefined) {
      problems.push(`a selector without a metric name: ${JSON.stringify(selector.matchers)}`);
      continue;
    }
    const labels = exported.get(metric);
    if (!labels) {
      problems.push(`metric ${metric} is not exported`);
      continue;
    }
    metrics.push(metric);
    for (const matcher of selector.matchers) {
      if (matcher.label === '__name__' || targetLabels.includes(matcher.label)) continue;
      const values = labels.get(matcher.label);
      if (!values) {
        problems.push(
          `metric ${metric} has no label ${matcher.label} (matcher ${matcher.label}${matcher.op}"${matcher.value}")`,
        );
      } else if (matcher.op === '=' && !matcher.value.includes('$') && !values.has(matcher.value)) {
        problems.push(
          `metric ${metric} has no series with ${matcher.label}="${matcher.value}" (exported: ${[...values].join(', ')})`,
        );
      }
    }
  }
  for (const label of clauseLabels) {
    if (targetLabels.includes(label)) continue;
    if (!metrics.some((metric) => exported.get(metric)?.has(label))) {
      problems.push(`no metric of the query has label ${label} (by/without/on/ignoring)`);
    }
  }
  return problems;
}
