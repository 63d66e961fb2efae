import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes: operators filter on these in the Temporal Web UI. */
export const CustomerIdAttr = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
export const KycStatusAttr = defineSearchAttributeKey('KycStatus', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [CustomerIdAttr, KycStatusAttr];
export const ExternalAccountStatusAttr = defineSearchAttributeKey('ExternalAccountStatus', SearchAttributeType.KEYWORD);
ALL_SEARCH_ATTRIBUTES.push(ExternalAccountStatusAttr);
export const TransferStateAttr = defineSearchAttributeKey('TransferState', SearchAttributeType.KEYWORD);
export const SourceRailAttr = defineSearchAttributeKey('SourceRail', SearchAttributeType.KEYWORD);
export const DestinationRailAttr = defineSearchAttributeKey('DestinationRail', SearchAttributeType.KEYWORD);
export const CurrencyAttr = defineSearchAttributeKey('Currency', SearchAttributeType.KEYWORD);
ALL_SEARCH_ATTRIBUTES.push(TransferStateAttr, SourceRailAttr, DestinationRailAttr, CurrencyAttr);
/** The activities a workflow keeps retrying past their alarm threshold (workflows/retry-alarm.ts), comma-separated. */
export const StuckActivityAttr = defineSearchAttributeKey('StuckActivity', SearchAttributeType.KEYWORD);
ALL_SEARCH_ATTRIBUTES.push(StuckActivityAttr);
/** A daily reconciliation's breaks (src/reconciliation/daily.ts): `statement_missing:<account>`, `exceptions:<account>`, comma-separated. */
export const ReconciliationBreakAttr = defineSearchAttributeKey('ReconciliationBreak', SearchAttributeType.KEYWORD);
ALL_SEARCH_ATTRIBUTES.push(ReconciliationBreakAttr);
