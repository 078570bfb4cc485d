/**
 * Source files longer than a package's bound, unless the file says at its top why it is longer: a comment among its
 * first lines starting "Over <bound> lines" (for instance "// Over 300 lines on purpose: one class whose …").
 */

/** The packages whose `src/` files are held to a length, in lines. */
export const FILE_LENGTH_BOUNDS: Readonly<Record<string, number>> = {
  'packages/ipam-provider': 300,
  'packages/ledger': 300,
};

export interface SourceText {
  /** Path relative to the workspace root. */
  path: string;
  text: string;
}

/** How many of the first lines may hold the reason. */
const REASON_WITHIN_LINES = 5;

/** Each file over `bound` lines without a stated reason at its top, with its length. */
export function overlongFiles(files: readonly SourceText[], bound: number): string[] {
  const reason = new RegExp(`^\\s*(//|/?\\*+)\\s*Over ${bound} lines\\b`);
  return files.flatMap(({ path, text }) => {
    const lines = text.split('\n');
    const count = text.endsWith('\n') ? lines.length - 1 : lines.length;
    if (count <= bound) return [];
    if (lines.slice(0, REASON_WITHIN_LINES).some((line) => reason.test(line))) return [];
    return [
      `${path} has ${count} lines, over ${bound}: split it, or say why at its top ("// Over ${bound} lines on purpose: …")`,
    ];
  });
}
