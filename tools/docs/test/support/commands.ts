import type { Page } from './markdown.js';

/**
 * The command lines of the guide: every line of a ```sh block (comments and `#`-tails dropped) and every inline code
 * span that starts with a command name, split into words as a shell would for these simple lines (no quoting is
 * used in the guide's clusterctl lines; a line with quotes is kept whole and its words split at spaces).
 */
export interface CommandLine {
  readonly words: readonly string[];
  readonly line: number;
  readonly text: string;
}

function words(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

/** `eval "$(node tools/kind/dist/cli.js create)"` is the command inside: the page runs that and evaluates what it prints. */
function unwrapEval(text: string): string {
  const match = /^eval\s+"\$\((.*)\)"$/.exec(text);
  return match ? (match[1] ?? '').trim() : text;
}

/** Lines of sh blocks and inline code spans whose first word is `program`. */
export function commandLines(page: Page, program: string): CommandLine[] {
  const found: CommandLine[] = [];
  for (const block of page.blocks.filter((candidate) => candidate.lang === 'sh')) {
    block.text.split('\n').forEach((raw, index) => {
      const text = unwrapEval(raw.replace(/\s+#.*$/, '').trim());
      if (words(text)[0] === program) found.push({ words: words(text), line: block.line + 1 + index, text });
    });
  }
  for (const code of page.inlineCode) {
    const text = unwrapEval(code.text);
    if (words(text)[0] === program) found.push({ words: words(text), line: code.line, text });
  }
  return found;
}

/** `--name=value` → `--name`; anything not a flag → undefined. */
export function flagName(word: string): string | undefined {
  const match = /^(-{1,2}[a-zA-Z0-9][a-zA-Z0-9-]*)(=.*)?$/.exec(word);
  return match?.[1];
}

/** The subcommand of a clusterctl line: its leading words that are not flags (`generate provider`). */
export function subcommand(line: CommandLine): string[] {
  const rest = line.words.slice(1);
  const end = rest.findIndex((word) => word.startsWith('-'));
  return end === -1 ? rest : rest.slice(0, end);
}
