import { checkSettledPayouts, type ChainMovement, type SettledPayout } from '../../src/reconciliation/chain-payouts';

// The chain side of the reconciliation (src/reconciliation/chain-payouts.ts): each settled payout is
// proved by a movement of its own on the chain.

const PAYEE = '0x9f8a26F2C9F90C4665e08B2bD6C4D8E3b6f1b1A1';
const payout = (id: string, over: Partial<SettledPayout> = {}): SettledPayout => ({ id, txHash: `0x${id}`, to: PAYEE, currency: 'usdc', amountMinor: 10_000_000n, ...over });
const moved = (index: number, over: Partial<ChainMovement> = {}): ChainMovement => ({ index, to: PAYEE, currency: 'usdc', amountMinor: 10_000_000n, ...over });

test('payouts each proved by a movement of their own: no exception (addresses compared without case on EVM chains)', () => {
  const payouts = [payout('a'), payout('b', { txHash: '0xshared' }), payout('c', { txHash: '0xshared' })];
  const movements = new Map([['0xa', [moved(0, { to: PAYEE.toLowerCase() })]], ['0xshared', [moved(3), moved(4)]]]);
  expect(checkSettledPayouts(payouts, movements)).toEqual([]);
});

test('three payouts marked settled on one transaction that paid once: the two it did not pay are caught, naming the payout that holds it', () => {
  const payouts = [payout('p1', { txHash: 'sig1', to: 'Payee1111111111111111111111111111111111111' }), payout('p2', { txHash: 'sig1', to: 'Payee1111111111111111111111111111111111111' }), payout('p3', { txHash: 'sig1', to: 'Payee1111111111111111111111111111111111111' })];
  const exceptions = checkSettledPayouts(payouts, new Map([['sig1', [moved(0, { to: 'Payee1111111111111111111111111111111111111' })]]]));
  expect(exceptions.map((e) => [e.type, e.payout.id, e.type === 'movement_claimed_twice' && e.claimedBy])).toEqual([
    ['movement_claimed_twice', 'p2', 'p1'], ['movement_claimed_twice', 'p3', 'p1'],
  ]);
});

test('a recorded transaction that pays someone else, pays less, is of another token, or is unknown to the node: each an exception', () => {
  const payouts = [payout('else'), payout('less'), payout('token'), payout('gone')];
  const movements = new Map([
    ['0xelse', [moved(0, { to: '0x000000000000000000000000000000000000bEEF' })]],
    ['0xless', [moved(0, { amountMinor: 9_000_000n }), moved(1, { to: '0x000000000000000000000000000000000000bEEF', amountMinor: 1_000_000n })]],
    ['0xtoken', [moved(0, { currency: 'usdt' })]],
  ]);
  expect(checkSettledPayouts(payouts, movements).map((e) => [e.type, e.payout.id, e.type === 'payee_not_paid' ? e.paidMinor : null])).toEqual([
    ['payee_not_paid', 'else', 0n], ['transaction_not_found', 'gone', null], ['payee_not_paid', 'less', 9_000_000n], ['payee_not_paid', 'token', 0n],
  ]);
});

test('bitcoin addresses are compared exactly (bech32 is lower case; base58 is case-sensitive)', () => {
  const btc = payout('b', { txHash: 'txb', currency: 'btc', to: 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', amountMinor: 50_000n });
  expect(checkSettledPayouts([btc], new Map([['txb', [moved(1, { currency: 'btc', to: 'MIPCBBFG9GMICH81KJ8TQQDGOZUB1ZJRFN', amountMinor: 50_000n })]]]))).toEqual([
    { type: 'payee_not_paid', payout: btc, paidMinor: 0n },
  ]);
});
