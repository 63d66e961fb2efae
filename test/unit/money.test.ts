import { parseAmount, parseAmountOrZero } from '../../src/domain/money';

// Amounts as decimal strings: parseAmount takes positive amounts only; parseAmountOrZero takes zero
// too (a nil balance on a statement, a tolerance of nothing), with no more decimals than the scale.

test('zero is an amount for parseAmountOrZero, not for parseAmount; precision and shape are checked alike', () => {
  expect(['0', '0.00', '0.0', '00'].map((v) => parseAmountOrZero(v, 2))).toEqual([0n, 0n, 0n, 0n]);
  expect(['0', '0.00'].map((v) => parseAmount(v, 2))).toEqual([null, null]);
  expect(['0.000', '-0', '1.505', 'x', ''].map((v) => parseAmountOrZero(v, 2))).toEqual([null, null, null, null, null]);
  expect(['1.50', '15'].map((v) => parseAmountOrZero(v, 2))).toEqual([150n, 1_500n]);
});
