export { clipText, clipUtf8, ELLIPSIS, echo, isIntegerInRange, MAX_ECHOED_VALUE_LENGTH } from './clip.js';
