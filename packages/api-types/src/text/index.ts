export {
  clipText,
  clipUtf8,
  codePointLength,
  describeJSON,
  ELLIPSIS,
  echo,
  isIntegerInRange,
  MAX_ECHOED_VALUE_LENGTH,
} from './clip.js';
