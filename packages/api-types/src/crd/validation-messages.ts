import type { CustomResourceDefinition } from './custom-resource-definition.js';

/** Text that only a CEL expression contains; a message a person reads never needs it. */
const CEL_SYNTAX = /\bself\b|\boldSelf\b|==|!=|&&|\|\||\bhas\(|\bsize\(|\bisIP\(|\bcidr\(/;

/** One `x-kubernetes-validations` rule whose fallback message would not do, and where it is. */
export interface ValidationMessageProblem {
  readonly crd: string;
  /** JSON-pointer-like path of the schema node holding the rule. */
  readonly at: string;
  readonly problem: string;
}

/**
 * Every CEL rule needs a static `message`: the API server shows it whenever the `messageExpression` cannot be used
 * (an evaluation error, or a result with a line break — a value with a newline in it), and without one it shows
 * `failed rule: <the CEL source>`. The message must read as English, not as CEL.
 */
export function validationMessageProblems(crd: CustomResourceDefinition): ValidationMessageProblem[] {
  const problems: ValidationMessageProblem[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      node.forEach((child, index) => {
        walk(child, `${at}/${index}`);
      });
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const rules = (node as { 'x-kubernetes-validations'?: unknown })['x-kubernetes-validations'];
    if (Array.isArray(rules)) {
      rules.forEach((rule: { message?: unknown }, index) => {
        const where = `${at}/x-kubernetes-validations/${index}`;
        const message = rule.message;
        if (typeof message !== 'string' || message.trim() === '') {
          problems.push({ crd: crd.metadata.name, at: where, problem: 'no message' });
        } else if (CEL_SYNTAX.test(message)) {
          problems.push({ crd: crd.metadata.name, at: where, problem: `message reads as CEL: ${message}` });
        } else if (/[\r\n]/.test(message)) {
          problems.push({ crd: crd.metadata.name, at: where, problem: 'message has a line break' });
        }
      });
    }
    for (const [key, child] of Object.entries(node)) {
      if (key !== 'x-kubernetes-validations') walk(child, `${at}/${key}`);
    }
  };
  walk(crd.spec, '/spec');
  return problems;
}
