/** The fee rates the platform pays on bitcoin, in satoshis per virtual byte: BITCOIN_MIN_FEE_RATE and BITCOIN_MAX_FEE_RATE. */
export interface FeeRateLimits {
  min: bigint;
  max: bigint;
}

/** The node's estimate held within the limits; the floor where the node has none. */
export function feeRateWithin(estimate: bigint | undefined, limits: FeeRateLimits): bigint {
  if (estimate === undefined || estimate < limits.min) return limits.min;
  return estimate > limits.max ? limits.max : estimate;
}

/**
 * The rate a replacement pays (BIP-125 asks more than the replaced one): half as much again as
 * `previous`, at least 2 more, or the estimate if higher; never above the ceiling. Undefined when
 * the ceiling leaves nothing higher to pay: the payout waits for a block at its rate.
 */
export function replacementFeeRate(previous: bigint, estimate: bigint, limits: FeeRateLimits): bigint | undefined {
  const bumped = previous + (previous / 2n > 2n ? previous / 2n : 2n);
  const wanted = bumped > estimate ? bumped : estimate;
  const rate = wanted > limits.max ? limits.max : wanted;
  return rate > previous ? rate : undefined;
}
