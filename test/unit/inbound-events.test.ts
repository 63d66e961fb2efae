import { handleInboundEvents } from '../../src/bank-files/inbound-files';
import type { RailEvent } from '../../src/providers/rails';

const credit = (id: string, reference: string): RailEvent => ({
  id, type: 'payment.received', providerPaymentId: `ach:f:${id}`, rail: 'ach', currency: 'usd', amountMinor: 100n, reference, senderName: 'JANE DOE',
});
const returned = (id: string, payment: string): RailEvent => ({ id, type: 'payment.returned', providerPaymentId: payment, code: 'R01' });
const tick = () => new Promise((r) => setTimeout(r, 2));

test('a file\'s events are handled several payments at a time, those of one payment in the file\'s order', async () => {
  const events = [credit('1', 'A'), credit('2', 'B'), returned('3', 'bpay_1'), credit('4', 'A'), returned('5', 'bpay_1'), ...Array.from({ length: 20 }, (_, i) => credit(`c${i}`, `R${i}`))];
  const order: string[] = [];
  let running = 0;
  let most = 0;
  await handleInboundEvents(events, async (e) => {
    most = Math.max(most, ++running);
    await tick();
    order.push(e.id);
    running--;
  }, 4);
  expect(order.sort()).toEqual(events.map((e) => e.id).sort());
  expect(most).toBe(4);
  const at = (id: string) => order.indexOf(id);
  expect(at('1')).toBeLessThan(at('4'));
  expect(at('3')).toBeLessThan(at('5'));
});

test('a failure is thrown once every other event has been handled; the failed payment\'s later events wait for a retry', async () => {
  const handled: string[] = [];
  const events = [credit('1', 'A'), credit('2', 'A'), credit('3', 'B'), credit('4', 'C')];
  await expect(handleInboundEvents(events, async (e) => {
    await tick();
    if (e.id === '1') throw new Error('the workflow could not be reached');
    handled.push(e.id);
  }, 2)).rejects.toThrow('the workflow could not be reached');
  expect(handled.sort()).toEqual(['3', '4']);
});
