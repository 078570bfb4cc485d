/** A command-line error naming the flag and the offending value. */
export class FlagError extends Error {
  override readonly name = 'FlagError';
  constructor(
    readonly flag: string,
    readonly value: string | undefined,
    reason: string,
  ) {
    super(
      value === undefined
        ? `flag --${flag}: ${reason}`
        : `invalid value ${JSON.stringify(value)} for flag --${flag}: ${reason}`,
    );
  }
}
