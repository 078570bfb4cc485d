export {
  CONDITION_REASON_PATTERN,
  CONDITION_TYPE_PATTERN,
  DNS1123_SUBDOMAIN_PATTERN,
  KIND_PATTERN,
} from './patterns.js';
export {
  Condition,
  ConditionStatus,
  Conditions,
  ListMeta,
  ObjectMeta,
  ObjectName,
  OwnerReference,
  Time,
} from './types.js';
