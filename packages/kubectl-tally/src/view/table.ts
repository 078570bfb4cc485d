/**
 * kubectl's table layout: upper-case headers, columns left-aligned and padded to their widest cell, three spaces
 * between columns, no trailing spaces. Cells are single-line: a newline or tab in a value (a condition message) would
 * break the columns, so they are shown as spaces.
 */

const COLUMN_GAP = '   ';

/** One cell as it is printed: control characters (newlines, tabs) become spaces. */
export function cellText(value: string): string {
  return value.replace(/\p{Cc}/gu, ' ');
}

/** The lines of a table with `headers` over `rows`; a row shorter than the headers is padded with empty cells. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cells = [
    headers.map((header) => cellText(header.toUpperCase())),
    ...rows.map((row) => headers.map((_, i) => cellText(row[i] ?? ''))),
  ];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => [...(row[column] ?? '')].length)));
  return cells.map((row) =>
    row
      .map((cell, column) =>
        column === row.length - 1 ? cell : cell.padEnd(cell.length + (widths[column] ?? 0) - [...cell].length),
      )
      .join(COLUMN_GAP)
      .trimEnd(),
  );
}
