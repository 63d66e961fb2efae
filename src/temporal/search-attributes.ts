import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes: operators filter on these in the Temporal Web UI. */
export const CustomerIdAttr = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
export const KycStatusAttr = defineSearchAttributeKey('KycStatus', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [CustomerIdAttr, KycStatusAttr];
export const ExternalAccountStatusAttr = defineSearchAttributeKey('ExternalAccountStatus', SearchAttributeType.KEYWORD);
ALL_SEARCH_ATTRIBUTES.push(ExternalAccountStatusAttr);
