export { clipText, ELLIPSIS, echo, isIntegerInRange, MAX_ECHOED_VALUE_LENGTH } from './clip.js';
