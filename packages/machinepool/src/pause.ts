// The pause step lives with the other Cluster API helpers in @tally-ipam/controller-kit/capi; this package keeps
// publishing it under the names it always had.
export {
  type EnsurePausedConditionInput,
  type EnsurePausedConditionResult,
  ensurePausedCondition,
  pausedConditionChanged,
} from '@tally-ipam/controller-kit/capi';
