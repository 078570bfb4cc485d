// @tally-ipam/controller-kit/capi: the one home of the Cluster API helpers every provider reconciler uses: the
// Cluster an object belongs to, pause (the Cluster's spec.paused, the paused annotation) and the Paused condition,
// metav1.Condition arithmetic and Ready summaries, CAPI's usual predicates, and Cluster API's names.
export {
  type Condition,
  type ConditionInput,
  type ConditionStatus,
  getCondition,
  InvalidConditionError,
  isConditionFalse,
  isConditionTrue,
  removeCondition,
  setCondition,
} from './conditions.js';
export {
  CLUSTER_API_GROUP,
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  MANAGED_BY_ANNOTATION,
  NOT_PAUSED_REASON,
  PAUSED_ANNOTATION,
  PAUSED_CONDITION,
  PAUSED_REASON,
  WATCH_FILTER_LABEL,
} from './constants.js';
export {
  clusterNameOf,
  getClusterOf,
  getOwnerCluster,
  hasPausedAnnotation,
  isClusterPaused,
  isClusterPausedOrAnnotated,
  isPaused,
  ownerClusterName,
  type PauseOptions,
  pausedCondition,
  pauseReasons,
} from './pause.js';
export {
  conditionsOf,
  type EnsurePausedConditionInput,
  type EnsurePausedConditionResult,
  ensurePausedCondition,
  pausedConditionChanged,
} from './paused-condition.js';
export {
  clusterToObjectKeys,
  clusterUnpaused,
  resourceHasFilterLabel,
  resourceNotPaused,
  resourceNotPausedAndHasFilterLabel,
} from './predicates.js';
export {
  NOT_READY_REASON,
  READY_REASON,
  READY_UNKNOWN_REASON,
  type SummaryInput,
  type SummarySource,
  summarizeConditions,
} from './summary.js';
