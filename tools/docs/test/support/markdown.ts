/**
 * The parts of a guide page the tests read: fenced code blocks (with their info string and line), inline code spans
 * of the prose, and pipe tables. A small reader for the Markdown the guide is written in, not a CommonMark parser:
 * a construct it does not know (an indented code block, a table without a header separator) is plain prose to it, so
 * a page that uses one simply has nothing of it checked — the tests that read tables fail when a table is missing.
 */

/** One fenced code block: ```lang word word … */
export interface CodeBlock {
  /** The first word of the info string (`yaml`, `sh`, `ts`), as GitHub highlights it; `''` when there is none. */
  readonly lang: string;
  /** The further words of the info string (`expect`, `run`): markers for the tests, invisible when rendered. */
  readonly flags: readonly string[];
  readonly text: string;
  /** 1-based line of the opening fence, for messages (`docs/guide/pools.md:42`). */
  readonly line: number;
}

/** A pipe table: its header cells and rows of cells, each cell trimmed, inline code kept as written. */
export interface Table {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
  readonly line: number;
}

export interface InlineCode {
  readonly text: string;
  readonly line: number;
}

export interface Page {
  /** The page's path from the repository root, e.g. `docs/guide/pools.md`. */
  readonly path: string;
  readonly blocks: readonly CodeBlock[];
  readonly tables: readonly Table[];
  /** Inline code spans outside fenced blocks (tables included). */
  readonly inlineCode: readonly InlineCode[];
  /** The page as written. */
  readonly text: string;
}

const FENCE = /^(`{3,}|~{3,})\s*(.*)$/;

/** Splits one table row into cells: `| a | b |` → ['a', 'b']; pipes inside inline code do not split. */
export function tableCells(row: string): string[] {
  const body = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  for (let i = 0; i < body.length; i += 1) {
    const char = body[i];
    if (char === '`') inCode = !inCode;
    if (char === '\\' && body[i + 1] === '|') {
      cell += '|';
      i += 1;
      continue;
    }
    if (char === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
      continue;
    }
    cell += char;
  }
  cells.push(cell.trim());
  return cells;
}

const SEPARATOR = /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/;

/** Reads a page's text. */
export function parsePage(path: string, text: string): Page {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  const tables: Table[] = [];
  const inlineCode: InlineCode[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? '```';
      const words = (fence[2] ?? '').trim().split(/\s+/).filter(Boolean);
      const body: string[] = [];
      const start = i + 1;
      i += 1;
      while (i < lines.length && !(lines[i] ?? '').startsWith(marker)) {
        body.push(lines[i] ?? '');
        i += 1;
      }
      if (i >= lines.length) throw new Error(`${path}:${start}: a code block is never closed`);
      blocks.push({ lang: words[0] ?? '', flags: words.slice(1), text: `${body.join('\n')}\n`, line: start });
      continue;
    }
    if (line.trimStart().startsWith('|') && SEPARATOR.test((lines[i + 1] ?? '').trim())) {
      const header = tableCells(line);
      const rows: string[][] = [];
      const start = i + 1;
      i += 2;
      while (i < lines.length && (lines[i] ?? '').trimStart().startsWith('|')) {
        rows.push(tableCells(lines[i] ?? ''));
        collectInlineCode(lines[i] ?? '', i + 1, inlineCode);
        i += 1;
      }
      i -= 1;
      tables.push({ header, rows, line: start });
      collectInlineCode(line, start, inlineCode);
      continue;
    }
    collectInlineCode(line, i + 1, inlineCode);
  }
  return { path, blocks, tables, inlineCode, text };
}

function collectInlineCode(line: string, lineNumber: number, into: InlineCode[]): void {
  for (const match of line.matchAll(/(`+)([^`]+?)\1(?!`)/g)) {
    into.push({ text: (match[2] ?? '').trim(), line: lineNumber });
  }
}

/** The text of inline code in a cell, without its backticks (`` `Ready` `` → `Ready`); the cell as is without any. */
export function codeOf(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
}

/** The one table of a page whose header starts with these cells (case-insensitive); throws naming the page if none. */
export function tableWithHeader(page: Page, ...header: readonly string[]): Table {
  const wanted = header.map((cell) => cell.toLowerCase());
  const found = page.tables.filter((table) =>
    wanted.every((cell, index) => (table.header[index] ?? '').toLowerCase() === cell),
  );
  if (found.length !== 1) {
    throw new Error(
      `${page.path}: expected exactly one table whose header starts with | ${header.join(' | ')} |, found ${found.length}`,
    );
  }
  return found[0] as Table;
}
