import { clipText } from '@tally-ipam/api-types';

/** How much of a refused value an error shows: enough to recognise it, never a screenful. */
export const CUT_LENGTH = 40;

/** Longest single argument or flag value the plugin accepts (names are at most 253 characters in Kubernetes). */
export const MAX_ARGUMENT_LENGTH = 256;

/** Most words one command line may have. */
export const MAX_ARGUMENTS = 32;

/** A value as an error shows it: clipped, and with control characters made visible as `?`. */
export function cutValue(value: string): string {
  return clipText(value.replace(/\p{Cc}/gu, '?'), CUT_LENGTH);
}
