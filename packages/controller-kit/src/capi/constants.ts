// Cluster API's names live in @tally-ipam/api-types; the kit re-exports the ones its CAPI helpers use, under the names
// it has always published.
import { CLUSTER_GROUP } from '@tally-ipam/api-types';

export {
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  MANAGED_BY_ANNOTATION,
  NOT_PAUSED_REASON,
  PAUSED_ANNOTATION,
  PAUSED_CONDITION,
  PAUSED_REASON,
  WATCH_FILTER_LABEL,
} from '@tally-ipam/api-types';

/** Cluster API's group for core types (`Cluster`, `Machine`, ...); api-types' `CLUSTER_GROUP`. */
export const CLUSTER_API_GROUP = CLUSTER_GROUP;
